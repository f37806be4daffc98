//! Audit trail rows written to the console database.

/// One row of `console_audit`. `user_id` here is the console database's own
/// auto-increment key for the actor, resolved through the `console_users` table;
/// it is never sent to the browser.
#[derive(Debug, Clone)]
pub struct AuditRow {
    pub id: i64,
    pub user_id: i64,
    pub action: String,
    pub target: String,
    pub at: i64,
}

impl AuditRow {
    pub fn new(user_id: i64, action: &str, target: &str, at: i64) -> Self {
        Self { id: 0, user_id, action: action.into(), target: target.into(), at }
    }
}
