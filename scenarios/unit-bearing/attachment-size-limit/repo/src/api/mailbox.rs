use axum::{extract::Path, http::StatusCode, Json};
use serde::{Deserialize, Serialize};

use crate::limits::{LimitError, MailboxLimits};

/// Body of `PUT /mailboxes/{mailbox_id}/settings`.
#[derive(Debug, Deserialize)]
pub struct UpdateMailboxSettings {
    pub display_name: Option<String>,
    /// Largest attachment a sender may add to a message.
    pub attachment_size_limit: Option<u32>,
    pub max_recipients: Option<u16>,
    pub retention_days: Option<u16>,
}

#[derive(Debug, Serialize)]
pub struct MailboxSettings {
    pub mailbox_id: String,
    pub display_name: String,
    pub attachment_size_limit: u32,
    pub max_recipients: u16,
    pub retention_days: u16,
}

#[derive(Debug, Serialize)]
pub struct ApiError {
    pub code: &'static str,
    pub message: String,
}

pub async fn update_settings(
    Path(mailbox_id): Path<String>,
    Json(body): Json<UpdateMailboxSettings>,
) -> Result<Json<MailboxSettings>, (StatusCode, Json<ApiError>)> {
    let mut limits = MailboxLimits::load(&mailbox_id).ok_or_else(|| {
        err(StatusCode::NOT_FOUND, "MAILBOX_NOT_FOUND", "no such mailbox")
    })?;
    if let Some(v) = body.attachment_size_limit {
        limits.attachment_size_limit = v;
    }
    if let Some(v) = body.max_recipients {
        limits.max_recipients = v;
    }
    if let Some(v) = body.retention_days {
        limits.retention_days = v;
    }
    limits.validate().map_err(|e| match e {
        LimitError::AttachmentTooLarge { .. } => {
            err(StatusCode::UNPROCESSABLE_ENTITY, "LIMIT_OUT_OF_RANGE", &e.to_string())
        }
        LimitError::TooManyRecipients(_) => {
            err(StatusCode::UNPROCESSABLE_ENTITY, "LIMIT_OUT_OF_RANGE", &e.to_string())
        }
    })?;
    limits.save();
    Ok(Json(MailboxSettings {
        mailbox_id,
        display_name: body.display_name.unwrap_or_default(),
        attachment_size_limit: limits.attachment_size_limit,
        max_recipients: limits.max_recipients,
        retention_days: limits.retention_days,
    }))
}

fn err(status: StatusCode, code: &'static str, message: &str) -> (StatusCode, Json<ApiError>) {
    (status, Json(ApiError { code, message: message.to_string() }))
}
