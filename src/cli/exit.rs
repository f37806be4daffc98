//! Documented exit codes, and the one mapping from the library's typed outcomes and errors
//! to them ([`ToExitCode`]).
//!
//! Invariant: this is the only place an exit code is decided. The library returns typed
//! outcomes and errors; where a process's own status crosses a wire (a relayed rail's exit
//! status, the agent's status through `sandbox-init`) the library carries it as data and
//! this module passes it on unchanged.

use crate::battery::runner::{BatteryError, Verdict};
use crate::case::CaseError;
use crate::driver::investigate::{InvestigateError, InvestigateReport};
use crate::mcp::McpError;
use crate::process::Outcome;
use crate::sandbox::init::{InitError, RelayClientError};
use crate::sandbox::relay::RelayOutcome;
use crate::sandbox::{ContainmentViolation, SandboxError};

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
/// A battery interrupted (128 + SIGINT, as shells report it); its finished trials are kept.
pub const CANCELLED: u8 = 130;

/// The documented exit code of a library outcome or error.
pub trait ToExitCode {
    fn exit_code(&self) -> u8;
}

impl ToExitCode for CaseError {
    /// An idempotency conflict (fresh or replayed) is a conflict; every other refusal is a
    /// rejection.
    fn exit_code(&self) -> u8 {
        match self {
            CaseError::IdempotencyConflict { .. } => CONFLICT,
            CaseError::Replayed { kind, .. } if kind == "idempotency_conflict" => CONFLICT,
            _ => REJECTED,
        }
    }
}

impl ToExitCode for SandboxError {
    /// A missing consent or an unknown backend is a usage error; a plan that would expose a
    /// hidden path is refused as a containment problem; the rest are driver failures.
    fn exit_code(&self) -> u8 {
        match self {
            SandboxError::NativeNotAcknowledged | SandboxError::UnknownBackend(_) => USAGE,
            SandboxError::HiddenExposed { .. } => CONTAINMENT,
            _ => DRIVER,
        }
    }
}

impl ToExitCode for ContainmentViolation {
    fn exit_code(&self) -> u8 {
        CONTAINMENT
    }
}

impl ToExitCode for InvestigateError {
    fn exit_code(&self) -> u8 {
        match self {
            InvestigateError::Case(e) => e.exit_code(),
            InvestigateError::NotOpen(_)
            | InvestigateError::RunPathNotUtf8
            | InvestigateError::Endpoint(_) => REJECTED,
            InvestigateError::Sandbox(e) => e.exit_code(),
        }
    }
}

impl ToExitCode for InvestigateReport {
    /// A changed repository outranks everything; then an agent that did not complete.
    fn exit_code(&self) -> u8 {
        match &self.violation {
            Some(v) => v.exit_code(),
            None if self.outcome != Outcome::Completed => DRIVER,
            None => OK,
        }
    }
}

impl ToExitCode for McpError {
    /// A refused run is the rails' refusal; a bad cap is a rejection; a server that could
    /// not start or serve is a driver failure.
    fn exit_code(&self) -> u8 {
        match self {
            McpError::Case(e) => e.exit_code(),
            McpError::Limit(_) => REJECTED,
            McpError::Start(_) => DRIVER,
        }
    }
}

impl ToExitCode for RelayOutcome {
    /// A relayed rail's own status passes through; a request the relay refused is a
    /// rejection; a rail the engine could not run to an exit status is a driver failure.
    fn exit_code(&self) -> u8 {
        match self {
            RelayOutcome::Exited(code) => *code,
            RelayOutcome::Refused => REJECTED,
            RelayOutcome::Failed => DRIVER,
        }
    }
}

impl ToExitCode for RelayClientError {
    fn exit_code(&self) -> u8 {
        DRIVER
    }
}

impl ToExitCode for InitError {
    fn exit_code(&self) -> u8 {
        DRIVER
    }
}

impl ToExitCode for Verdict {
    /// A battery that completed exits 0 whatever the scores; a failed control, a changed
    /// label set or a deterministic arm that disagreed with itself is a rejection; too many
    /// infrastructure failures is a driver failure.
    fn exit_code(&self) -> u8 {
        match self {
            Verdict::Completed => OK,
            Verdict::ControlsFailed | Verdict::LabelsChanged | Verdict::Nondeterministic => {
                REJECTED
            }
            Verdict::InfraLimit => DRIVER,
            Verdict::Cancelled => CANCELLED,
        }
    }
}

impl ToExitCode for BatteryError {
    fn exit_code(&self) -> u8 {
        match self {
            BatteryError::Input(_) | BatteryError::Incompatible(_) | BatteryError::Fatal(_) => {
                REJECTED
            }
            BatteryError::Busy(_) => CONFLICT,
        }
    }
}
