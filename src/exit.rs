//! Documented exit codes. One mapping from error kind to code lives in [`crate::cli`].

/// Success.
pub const OK: u8 = 0;
/// Rejected by a rail: validation, policy, binding, bad input.
pub const REJECTED: u8 = 1;
/// Usage error (bad flags or arguments).
pub const USAGE: u8 = 2;
/// Conflict: idempotency key reused with a different body, or a lock held.
pub const CONFLICT: u8 = 3;
/// Containment violation.
pub const CONTAINMENT: u8 = 4;
/// Driver failure or timeout.
pub const DRIVER: u8 = 5;
