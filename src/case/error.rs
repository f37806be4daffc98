//! Errors of the case engine. Each names the input it refused.

use std::path::PathBuf;

use serde::Serialize;

use super::proposal::DocError;
use crate::air::{AirError, TargetKeyError};

#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error(transparent)]
    Air(#[from] AirError),
    #[error("unknown skill `{skill}`; known skills: {known}")]
    UnknownSkill { skill: String, known: String },
    #[error(transparent)]
    Target(#[from] TargetKeyError),
    #[error("target `{target}` is not in the AIR `{air}`")]
    TargetNotInAir { target: String, air: String },
    #[error("skill `{skill}` acts on {expected} targets, but `{target}` is a {actual}")]
    WrongTargetKind {
        skill: String,
        target: String,
        expected: String,
        actual: String,
    },
    #[error("no deficiency that skill `{skill}` closes ({triggers}) is detected on `{target}`")]
    NoDeficiency {
        skill: String,
        target: String,
        triggers: String,
    },
    #[error(
        "deficiency `{code}` is not detected on `{target}` for skill `{skill}`; detected: {detected}"
    )]
    DeficiencyNotDetected {
        code: String,
        skill: String,
        target: String,
        detected: String,
    },
    #[error("repository `{}` is not a directory", path.display())]
    RepoNotDir { path: PathBuf },
    #[error("database snapshot `{path}` cannot be declared: {reason}")]
    BadSnapshot { path: String, reason: String },
    #[error("tool limit `{rule}` is invalid: {reason}")]
    BadToolLimit { rule: String, reason: String },
    #[error("scope `{scope}` is invalid: {reason}")]
    BadScope { scope: String, reason: String },
    #[error("`{}` is not a run directory: {reason}", path.display())]
    NotARun { path: PathBuf, reason: String },
    #[error("run `{run}` belongs to case `{actual}`, not `{expected}`")]
    WrongCase {
        run: String,
        expected: String,
        actual: String,
    },
    #[error("run `{run}` is stale: {}", fields.iter().map(std::string::ToString::to_string).collect::<Vec<_>>().join("; "))]
    Stale {
        run: String,
        fields: Vec<StaleField>,
    },
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is corrupt at `{field}`: {reason}", file.display())]
    Corrupt {
        file: PathBuf,
        field: String,
        reason: String,
    },
    #[error(transparent)]
    Document(#[from] DocError),
    #[error("idempotency key `{key}` was already used by `{rail}` with a different body")]
    IdempotencyConflict { key: String, rail: String },
    #[error("idempotency key `{key}` is invalid: it must be 1 to 200 characters")]
    BadIdempotencyKey { key: String },
    #[error("{message} (replayed from the journal)")]
    Replayed { kind: String, message: String },
    #[error(transparent)]
    Evidence(#[from] super::evidence::EvidenceError),
    #[error("{rail} refused: {reason}")]
    Rail {
        rail: &'static str,
        kind: &'static str,
        reason: String,
    },
    #[error(
        "tamper detected: `{file}` changed after its stage was frozen (frozen {frozen}, now {now})"
    )]
    Tamper {
        file: String,
        frozen: String,
        now: String,
    },
    #[error("tamper detected: `{file}` ({field}) {reason}; the run cannot be trusted")]
    Tampered {
        file: String,
        field: String,
        reason: String,
    },
    #[error("illegal transition: {reason}")]
    Transition { reason: String },
}

impl CaseError {
    pub fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> CaseError {
        let path = path.into();
        move |source| CaseError::Io {
            action,
            path,
            source,
        }
    }

    /// A stable, machine-readable name for this kind of refusal.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            CaseError::Air(_) => "invalid_air",
            CaseError::UnknownSkill { .. } => "unknown_skill",
            CaseError::Target(_) => "malformed_target",
            CaseError::TargetNotInAir { .. } => "target_not_in_air",
            CaseError::WrongTargetKind { .. } => "wrong_target_kind",
            CaseError::NoDeficiency { .. } => "no_deficiency",
            CaseError::DeficiencyNotDetected { .. } => "deficiency_not_detected",
            CaseError::RepoNotDir { .. } => "repository_not_a_directory",
            CaseError::BadScope { .. } => "bad_scope",
            CaseError::BadToolLimit { .. } => "bad_tool_limit",
            CaseError::BadSnapshot { .. } => "bad_snapshot",
            CaseError::NotARun { .. } => "not_a_run",
            CaseError::WrongCase { .. } => "wrong_case",
            CaseError::Stale { .. } => "stale_run",
            CaseError::Io { .. } => "io",
            CaseError::Corrupt { .. } => "corrupt_run",
            CaseError::Document(_) => "rejected_document",
            CaseError::IdempotencyConflict { .. } => "idempotency_conflict",
            CaseError::BadIdempotencyKey { .. } => "bad_idempotency_key",
            CaseError::Replayed { .. } => "replayed_refusal",
            CaseError::Evidence(e) => e.kind(),
            CaseError::Rail { kind, .. } => kind,
            CaseError::Tamper { .. } | CaseError::Tampered { .. } => "tamper",
            CaseError::Transition { .. } => "illegal_transition",
        }
    }
}

/// One identity field that no longer matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleField {
    pub field: &'static str,
    pub recorded: String,
    pub current: String,
}

impl std::fmt::Display for StaleField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} was {} and is now {}",
            self.field, self.recorded, self.current
        )
    }
}
