use crate::limits::MailboxLimits;

/// Whole-request cap applied by the HTTP layer before any mailbox setting is read.
/// `max_body_size` is a raw byte count.
pub struct UploadConfig {
    pub max_body_size: usize,
}

impl Default for UploadConfig {
    fn default() -> Self {
        Self { max_body_size: 64 * 1024 * 1024 }
    }
}

#[derive(Debug, PartialEq)]
pub enum Rejection {
    BodyTooLarge,
    AttachmentTooLarge { limit_bytes: u64 },
}

/// Checks one attachment against the request cap and the mailbox setting.
pub fn check_attachment(
    cfg: &UploadConfig,
    limits: &MailboxLimits,
    attachment_len: usize,
) -> Result<(), Rejection> {
    if attachment_len > cfg.max_body_size {
        return Err(Rejection::BodyTooLarge);
    }
    let limit_bytes = limits.attachment_limit_bytes();
    if attachment_len as u64 > limit_bytes {
        return Err(Rejection::AttachmentTooLarge { limit_bytes });
    }
    Ok(())
}
