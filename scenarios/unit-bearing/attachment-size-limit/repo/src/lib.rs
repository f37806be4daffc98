//! Mailroom: shared mailboxes with attachment handling.

pub mod api;
pub mod limits;
pub mod upload;

pub use limits::MailboxLimits;
