use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::auth::Caller;
use crate::store::{AuditEvent, PageToken, Store};

pub const DEFAULT_PAGE_SIZE: u32 = 50;
pub const MAX_PAGE_SIZE: u32 = 500;

#[derive(Debug, Deserialize)]
pub struct ListParams {
    pub page_size: Option<u32>,
    pub page_token: Option<String>,
    pub actor_id: Option<String>,
    pub since: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize)]
pub struct ListResponse {
    pub events: Vec<AuditEvent>,
    pub next_page_token: Option<String>,
}

type ApiError = (StatusCode, Json<serde_json::Value>);

fn error(status: StatusCode, code: &str) -> ApiError {
    (status, Json(serde_json::json!({ "code": code })))
}

pub async fn list_events(
    State(store): State<Store>,
    caller: Caller,
    Query(params): Query<ListParams>,
) -> Result<Json<ListResponse>, ApiError> {
    if !caller.has_scope("audit:read") {
        return Err(error(StatusCode::FORBIDDEN, "FORBIDDEN"));
    }
    let page_size = params.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if page_size == 0 || page_size > MAX_PAGE_SIZE {
        return Err(error(StatusCode::BAD_REQUEST, "PAGE_SIZE_TOO_LARGE"));
    }
    let after = match params.page_token.as_deref().map(PageToken::decode).transpose() {
        Ok(t) => t,
        Err(_) => return Err(error(StatusCode::BAD_REQUEST, "INVALID_PAGE_TOKEN")),
    };
    // Fetch one row more than asked to learn whether another page exists.
    let mut rows = store
        .events(caller.tenant_id(), params.actor_id.as_deref(), params.since, after, i64::from(page_size) + 1)
        .await
        .map_err(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"))?;
    let next_page_token = if rows.len() > page_size as usize {
        rows.truncate(page_size as usize);
        rows.last().map(|e| PageToken::after(e).encode())
    } else {
        None
    };
    Ok(Json(ListResponse { events: rows, next_page_token }))
}
