//! What a skill contract is about: the deficiency codes it triggers on (and their
//! severity) and the kind of target it writes. AIR's detector and target keys use the same
//! names; they live here, below both, so a contract can name them without importing AIR.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A class of deficiency a skill can close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeficiencyCode {
    MissingFieldDescription,
    TautologicalDescription,
    MissingOperationDescription,
    ErrorRetryabilityUnclear,
    UnitAmbiguousField,
    UnclassifiedSensitiveField,
    UnprovenInferredValue,
}

impl DeficiencyCode {
    pub const ALL: [DeficiencyCode; 7] = [
        DeficiencyCode::MissingFieldDescription,
        DeficiencyCode::TautologicalDescription,
        DeficiencyCode::MissingOperationDescription,
        DeficiencyCode::ErrorRetryabilityUnclear,
        DeficiencyCode::UnitAmbiguousField,
        DeficiencyCode::UnclassifiedSensitiveField,
        DeficiencyCode::UnprovenInferredValue,
    ];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            DeficiencyCode::MissingFieldDescription => "missing_field_description",
            DeficiencyCode::TautologicalDescription => "tautological_description",
            DeficiencyCode::MissingOperationDescription => "missing_operation_description",
            DeficiencyCode::ErrorRetryabilityUnclear => "error_retryability_unclear",
            DeficiencyCode::UnitAmbiguousField => "unit_ambiguous_field",
            DeficiencyCode::UnclassifiedSensitiveField => "unclassified_sensitive_field",
            DeficiencyCode::UnprovenInferredValue => "unproven_inferred_value",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<DeficiencyCode> {
        DeficiencyCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    #[must_use]
    pub fn severity(self) -> Severity {
        match self {
            DeficiencyCode::UnclassifiedSensitiveField => Severity::High,
            DeficiencyCode::ErrorRetryabilityUnclear
            | DeficiencyCode::UnitAmbiguousField
            | DeficiencyCode::MissingFieldDescription
            | DeficiencyCode::MissingOperationDescription => Severity::Medium,
            DeficiencyCode::TautologicalDescription | DeficiencyCode::UnprovenInferredValue => {
                Severity::Low
            }
        }
    }
}

impl fmt::Display for DeficiencyCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Low,
    Medium,
    High,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        })
    }
}

/// The kind of thing a target key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    Operation,
    Field,
    Error,
    Capability,
}

impl TargetKind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Operation => "operation",
            TargetKind::Field => "field",
            TargetKind::Error => "error",
            TargetKind::Capability => "capability",
        }
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
