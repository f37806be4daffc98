//! The proposal an agent deposits in `output/proposal.json`, parsed strictly and bound to
//! its case.
//!
//! Invariant: a [`Proposal`] value exists only if the document passed every structural
//! rule and the identity binding (`case.target == proposal.target == patch.target`, skill,
//! skillVersion, deficiency). Nothing is coerced: a mismatch is a rejection.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::doc::CaseDoc;
use crate::air::{DeficiencyCode, TargetKey};

pub const PROPOSAL_FORMAT: &str = "anvil-proposal";
pub const PROPOSAL_FORMAT_VERSION: u32 = 1;

/// AIR keys that define structure; a patch may never write them.
pub const STRUCTURAL_KEYS: &[&str] = &[
    "type", "required", "name", "location", "enum", "code", "status", "id", "method", "path",
];

/// The wire shape of a proposal (what the agent writes). The per-case JSON Schema is
/// generated from this type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawProposal {
    pub format: String,
    pub format_version: u32,
    pub skill: String,
    pub skill_version: u32,
    pub deficiency: String,
    pub target: String,
    pub patch: RawPatch,
    /// Writable field → ids of the claims that ground its new value.
    pub grounding: BTreeMap<String, Vec<String>>,
    pub confidence: f64,
    pub rationale: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawPatch {
    pub target: String,
    pub set: Map<String, Value>,
}

/// A parsed, bound proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub target: TargetKey,
    pub deficiency: DeficiencyCode,
    pub set: Map<String, Value>,
    pub grounding: BTreeMap<String, Vec<String>>,
    pub confidence: f64,
    pub rationale: String,
    pub raw: RawProposal,
}

/// What kind of rejection a document got. Stable names, used in `--json` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DocErrorKind {
    Syntax,
    Shape,
    UnknownField,
    Format,
    Confidence,
    MalformedTarget,
    UnknownDeficiency,
    Binding,
    Boundary,
    StructuralChange,
    Value,
    Grounding,
    /// A field over its named cap (see [`crate::limits`]).
    TooLarge,
}

/// A rejected agent document: which document, which field, why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct DocError {
    pub document: String,
    pub field: String,
    pub kind: DocErrorKind,
    pub reason: String,
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` rejected at `{}` ({}): {}",
            self.document,
            self.field,
            serde_json::to_value(self.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            self.reason
        )
    }
}

impl DocError {
    pub fn new(document: &str, field: &str, kind: DocErrorKind, reason: impl Into<String>) -> Self {
        DocError {
            document: document.to_string(),
            field: field.to_string(),
            kind,
            reason: reason.into(),
        }
    }
}

/// True for an engine-issued claim id (`cl-` and a non-empty `[A-Za-z0-9_-]` tail).
#[must_use]
pub fn is_claim_id(s: &str) -> bool {
    s.strip_prefix("cl-").is_some_and(|t| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    })
}

/// The regex form of [`is_claim_id`] for JSON Schema.
pub const CLAIM_ID_PATTERN: &str = "^cl-[A-Za-z0-9_-]+$";

/// Parses `bytes` as the proposal of `case`, strictly. `document` names it in errors.
///
/// # Errors
///
/// A [`DocError`] of kind `syntax` when `bytes` are not UTF-8 or not valid JSON (a
/// duplicate key included), `unknown_field` or `shape` when they do not match the
/// proposal's structure, and the refusals of [`bind`].
pub fn parse_proposal(bytes: &[u8], case: &CaseDoc, document: &str) -> Result<Proposal, DocError> {
    let err = |field: &str, kind, reason: String| DocError::new(document, field, kind, reason);
    let text = std::str::from_utf8(bytes)
        .map_err(|e| err(".", DocErrorKind::Syntax, format!("not UTF-8: {e}")))?;
    let raw: RawProposal = crate::json_path::from_str(text).map_err(|e| {
        let kind =
            if e.message.starts_with("not valid JSON") || e.message.starts_with("duplicate key") {
                DocErrorKind::Syntax
            } else if e.message.starts_with("unknown field") {
                DocErrorKind::UnknownField
            } else {
                DocErrorKind::Shape
            };
        err(&e.path, kind, e.message)
    })?;
    bind(raw, case, document)
}

/// Checks a structurally parsed proposal against its case: constants, binding, boundary,
/// value constraints and grounding shape.
///
/// # Errors
///
/// A [`DocError`] when a constant field is wrong, the target or patch target is malformed
/// (`malformed_target`), the deficiency code is unknown (`unknown_deficiency`), the
/// proposal is not bound to `case`'s target, deficiency or skill, the patch breaks the
/// case's boundary or value constraints, or the grounding is malformed.
pub fn bind(raw: RawProposal, case: &CaseDoc, document: &str) -> Result<Proposal, DocError> {
    let err = |field: &str, kind, reason: String| DocError::new(document, field, kind, reason);
    check_constants(&raw, document)?;
    let target: TargetKey = raw
        .target
        .parse()
        .map_err(|e: crate::air::TargetKeyError| {
            err("target", DocErrorKind::MalformedTarget, e.reason)
        })?;
    let patch_target: TargetKey =
        raw.patch
            .target
            .parse()
            .map_err(|e: crate::air::TargetKeyError| {
                err("patch.target", DocErrorKind::MalformedTarget, e.reason)
            })?;
    let deficiency = DeficiencyCode::parse(&raw.deficiency).ok_or_else(|| {
        err(
            "deficiency",
            DocErrorKind::UnknownDeficiency,
            format!("`{}` is not a deficiency code", raw.deficiency),
        )
    })?;
    check_binding(&raw, case, &target, &patch_target, deficiency, document)?;
    check_patch(&raw, case, document)?;
    check_grounding(&raw, document)?;
    Ok(Proposal {
        target,
        deficiency,
        set: raw.patch.set.clone(),
        grounding: raw.grounding.clone(),
        confidence: raw.confidence,
        rationale: raw.rationale.clone(),
        raw,
    })
}

/// The document's own constants and bounds: format, version, rationale size, confidence.
fn check_constants(raw: &RawProposal, document: &str) -> Result<(), DocError> {
    let err = |field: &str, kind, reason: String| DocError::new(document, field, kind, reason);
    if raw.format != PROPOSAL_FORMAT {
        return Err(err(
            "format",
            DocErrorKind::Format,
            format!("expected `{PROPOSAL_FORMAT}`, found `{}`", raw.format),
        ));
    }
    if raw.format_version != PROPOSAL_FORMAT_VERSION {
        return Err(err(
            "formatVersion",
            DocErrorKind::Format,
            format!(
                "unsupported version {}; this build reads {PROPOSAL_FORMAT_VERSION}",
                raw.format_version
            ),
        ));
    }
    if let Err(e) = crate::limits::Limit::RationaleBytes.check(raw.rationale.len()) {
        return Err(err("rationale", DocErrorKind::TooLarge, e.to_string()));
    }
    if !raw.confidence.is_finite() || !(0.0..=1.0).contains(&raw.confidence) {
        return Err(err(
            "confidence",
            DocErrorKind::Confidence,
            format!("{} is outside [0, 1]", raw.confidence),
        ));
    }
    Ok(())
}

/// The proposal is about this case: its target, patch target, skill, skill version and
/// deficiency are the case's.
fn check_binding(
    raw: &RawProposal,
    case: &CaseDoc,
    target: &TargetKey,
    patch_target: &TargetKey,
    deficiency: DeficiencyCode,
    document: &str,
) -> Result<(), DocError> {
    let err = |field: &str, kind, reason: String| DocError::new(document, field, kind, reason);
    let id = &case.identity;
    if *target != case.target.key {
        return Err(err(
            "target",
            DocErrorKind::Binding,
            format!(
                "proposal targets `{target}` but the case targets `{}`",
                case.target.key
            ),
        ));
    }
    if patch_target != target {
        return Err(err(
            "patch.target",
            DocErrorKind::Binding,
            format!("patch targets `{patch_target}` but the proposal targets `{target}`"),
        ));
    }
    if raw.skill != id.skill {
        return Err(err(
            "skill",
            DocErrorKind::Binding,
            format!(
                "proposal is for skill `{}` but the case is `{}`",
                raw.skill, id.skill
            ),
        ));
    }
    if raw.skill_version != id.skill_version {
        return Err(err(
            "skillVersion",
            DocErrorKind::Binding,
            format!(
                "proposal is for version {} but the case is version {}",
                raw.skill_version, id.skill_version
            ),
        ));
    }
    if deficiency != case.task.deficiency {
        return Err(err(
            "deficiency",
            DocErrorKind::Binding,
            format!(
                "proposal closes `{deficiency}` but the case is about `{}`",
                case.task.deficiency
            ),
        ));
    }
    Ok(())
}

/// The patch sets exactly the writable fields of the skill, each to an admissible value,
/// and nothing structural.
fn check_patch(raw: &RawProposal, case: &CaseDoc, document: &str) -> Result<(), DocError> {
    let err = |field: &str, kind, reason: String| DocError::new(document, field, kind, reason);
    let contract = &case.policy.contract;
    let writable = contract.writable_fields();
    for (key, value) in &raw.patch.set {
        let at = format!("patch.set.{key}");
        if STRUCTURAL_KEYS.contains(&key.as_str()) {
            return Err(err(
                &at,
                DocErrorKind::StructuralChange,
                format!("`{key}` is structural and never writable"),
            ));
        }
        if !writable.contains(&key.as_str()) {
            return Err(err(
                &at,
                DocErrorKind::Boundary,
                format!(
                    "`{key}` is outside the writable fields ({})",
                    writable.join(", ")
                ),
            ));
        }
        let constraint = contract.value_constraints.get(key.as_str());
        if !constraint.is_some_and(|c| c.admits(value)) {
            let want = constraint
                .map(crate::skill::ValueConstraint::describe)
                .unwrap_or_default();
            return Err(err(
                &at,
                DocErrorKind::Value,
                format!("{value} is not an admissible value: expected {want}"),
            ));
        }
    }
    for field in &writable {
        if !raw.patch.set.contains_key(*field) {
            return Err(err(
                "patch.set",
                DocErrorKind::Boundary,
                format!("missing `{field}`: a proposal sets every writable field of its skill"),
            ));
        }
    }
    Ok(())
}

/// Every patched field is grounded on a list of distinct claim ids, and only patched
/// fields are.
fn check_grounding(raw: &RawProposal, document: &str) -> Result<(), DocError> {
    let err = |field: &str, kind, reason: String| DocError::new(document, field, kind, reason);
    for (key, ids) in &raw.grounding {
        let at = format!("grounding.{key}");
        if !raw.patch.set.contains_key(key) {
            return Err(err(
                &at,
                DocErrorKind::Grounding,
                format!("`{key}` is not patched"),
            ));
        }
        if ids.is_empty() {
            return Err(err(&at, DocErrorKind::Grounding, "lists no claim".into()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for claim in ids {
            if !is_claim_id(claim) {
                return Err(err(
                    &at,
                    DocErrorKind::Grounding,
                    format!("`{claim}` is not a claim id"),
                ));
            }
            if !seen.insert(claim) {
                return Err(err(
                    &at,
                    DocErrorKind::Grounding,
                    format!("`{claim}` is listed twice"),
                ));
            }
        }
    }
    for key in raw.patch.set.keys() {
        if !raw.grounding.contains_key(key) {
            return Err(err(
                "grounding",
                DocErrorKind::Grounding,
                format!("patched `{key}` has no grounding claims"),
            ));
        }
    }
    Ok(())
}
