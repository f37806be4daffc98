use thiserror::Error;

/// Hard ceiling for any mailbox, whatever the plan.
const ATTACHMENT_CEILING_BYTES: u64 = 50 * 1024 * 1024;
const MAX_RECIPIENTS: u16 = 500;

#[derive(Debug, Error)]
pub enum LimitError {
    #[error("attachment limit of {requested} bytes exceeds the ceiling of {ceiling} bytes")]
    AttachmentTooLarge { requested: u64, ceiling: u64 },
    #[error("at most {MAX_RECIPIENTS} recipients, got {0}")]
    TooManyRecipients(u16),
}

#[derive(Debug, Clone)]
pub struct MailboxLimits {
    pub mailbox_id: String,
    pub attachment_size_limit: u32,
    pub max_recipients: u16,
    pub retention_days: u16,
}

impl MailboxLimits {
    pub fn load(mailbox_id: &str) -> Option<Self> {
        // Settings storage is elided in this slice; defaults stand in for a row.
        Some(Self {
            mailbox_id: mailbox_id.to_string(),
            attachment_size_limit: 10 * 1024,
            max_recipients: 50,
            retention_days: 365,
        })
    }

    pub fn save(&self) {}

    /// The per-attachment limit as the upload path enforces it.
    pub fn attachment_limit_bytes(&self) -> u64 {
        u64::from(self.attachment_size_limit) * 1024
    }

    pub fn validate(&self) -> Result<(), LimitError> {
        let requested = self.attachment_limit_bytes();
        if requested > ATTACHMENT_CEILING_BYTES {
            return Err(LimitError::AttachmentTooLarge {
                requested,
                ceiling: ATTACHMENT_CEILING_BYTES,
            });
        }
        if self.max_recipients > MAX_RECIPIENTS {
            return Err(LimitError::TooManyRecipients(self.max_recipients));
        }
        Ok(())
    }
}
