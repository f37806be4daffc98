//! The arguments of the rail tools: one strict type per tool, from which both the tool's
//! JSON Schema (schemars) and its parser (serde) come.
//!
//! Invariant: a schema and its parser never disagree. Every type denies unknown fields, so
//! the schema says `additionalProperties: false` and a call carrying an unknown field is
//! refused before any rail runs.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::case::CaseError;
use crate::case::proposal::{DocError, DocErrorKind};
use crate::driver::mcp_wiring::tool;

/// `add_evidence`: freeze a repository coordinate as an evidence artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AddEvidenceArgs {
    /// Repository-relative path of the source (no absolute paths, no `..`).
    pub path: String,
    /// First line, 1-based and inclusive; give it with `endLine`. Default: the whole file.
    #[serde(default)]
    pub start_line: Option<u32>,
    /// Last line, inclusive; give it with `startLine`.
    #[serde(default)]
    pub end_line: Option<u32>,
    /// Makes the call idempotent: the same key and arguments replay the saved outcome;
    /// the same key with other arguments is a conflict.
    pub idempotency_key: String,
}

/// `add_external_evidence`: record an excerpt from outside the repository (always unverified).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AddExternalEvidenceArgs {
    /// Where the excerpt comes from (e.g. `vendor-docs`).
    pub source: String,
    /// The excerpt's address.
    pub uri: String,
    /// The excerpt text itself.
    pub excerpt: String,
    /// Makes the call idempotent (see `add_evidence`).
    pub idempotency_key: String,
}

/// `add_claim`: an atomic claim over existing artifacts, in the skill's vocabulary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AddClaimArgs {
    /// One of the skill's output or supporting predicates.
    pub predicate: String,
    /// The asserted value (a JSON value: `"s"`, `true`, `"Amount in cents"`).
    pub value: Value,
    /// The ids of the artifacts the claim rests on (at least one).
    pub artifact_ids: Vec<String>,
    /// Confidence in [0, 1]. Default 1.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Makes the call idempotent (see `add_evidence`).
    pub idempotency_key: String,
}

/// `freeze_research`: freeze evidence and claims and run stage 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FreezeResearchArgs {
    /// Makes the call idempotent (see `add_evidence`).
    pub idempotency_key: String,
}

/// `validate`: freeze output/proposal.json and record the authoritative verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValidateArgs {
    /// Run the checks and return the verdict without freezing or recording anything.
    #[serde(default)]
    pub dry_run: Option<bool>,
    /// Makes the call idempotent (see `add_evidence`).
    pub idempotency_key: String,
}

/// `finalize`: record the honest outcome in output/result.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FinalizeArgs {
    /// `proposal_generated`, `supported`, `conflicted`, `insufficient_evidence` or
    /// `blocked_by_missing_source`. Default: `proposal_generated` after a passing validation.
    #[serde(default)]
    pub status: Option<String>,
    /// Why (recorded in result.json).
    #[serde(default)]
    pub reason: Option<String>,
    /// Makes the call idempotent (see `add_evidence`).
    pub idempotency_key: String,
}

/// `show`: the run's state, frozen hashes, staleness and the next legal rails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShowArgs {}

/// One parsed rail call.
#[derive(Debug, Clone, PartialEq)]
pub enum RailCall {
    AddEvidence(AddEvidenceArgs),
    AddExternalEvidence(AddExternalEvidenceArgs),
    AddClaim(AddClaimArgs),
    FreezeResearch(FreezeResearchArgs),
    Validate(ValidateArgs),
    Finalize(FinalizeArgs),
    Show(ShowArgs),
}

/// A rail tool: its MCP name, what it does, and its argument schema.
pub struct RailTool {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Map<String, Value>,
    pub read_only: bool,
}

fn schema_of<T: JsonSchema>() -> Map<String, Value> {
    match schemars::schema_for!(T).to_value() {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The rail tools, in the order an investigation uses them.
pub const RAIL_TOOLS: &[RailTool] = &[
    RailTool {
        name: tool::ADD_EVIDENCE,
        description: "Freeze a repository coordinate (a repository-relative path and an optional \
            1-based inclusive line range) as an evidence artifact. Returns the artifact; cite its \
            `id` in add_claim.",
        schema: schema_of::<AddEvidenceArgs>,
        read_only: false,
    },
    RailTool {
        name: tool::ADD_EXTERNAL_EVIDENCE,
        description: "Record an excerpt from outside the repository as an unverified evidence \
            artifact. Returns the artifact.",
        schema: schema_of::<AddExternalEvidenceArgs>,
        read_only: false,
    },
    RailTool {
        name: tool::ADD_CLAIM,
        description: "Assert one atomic claim (a predicate of the skill's vocabulary and a value) \
            resting on existing artifact ids. Returns the stored claim.",
        schema: schema_of::<AddClaimArgs>,
        read_only: false,
    },
    RailTool {
        name: tool::FREEZE_RESEARCH,
        description: "Freeze evidence and claims and run stage 1 (claims accepted or rejected, \
            conflicts). After this, write output/proposal.json and call validate.",
        schema: schema_of::<FreezeResearchArgs>,
        read_only: false,
    },
    RailTool {
        name: tool::VALIDATE,
        description: "Freeze output/proposal.json, run the checks and record the authoritative \
            verdict (`dryRun` only reports it). Returns the verdict and every check.",
        schema: schema_of::<ValidateArgs>,
        read_only: false,
    },
    RailTool {
        name: tool::FINALIZE,
        description: "Record the honest outcome in output/result.json: proposal_generated after a \
            passing validation, or a decline with its status and reason.",
        schema: schema_of::<FinalizeArgs>,
        read_only: false,
    },
    RailTool {
        name: tool::SHOW,
        description: "The run's state, frozen hashes, staleness and the next legal rails.",
        schema: schema_of::<ShowArgs>,
        read_only: true,
    },
];

fn parse<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, CaseError> {
    crate::json_path::deserialize(arguments).map_err(|e| {
        let kind = if e.message.starts_with("unknown field") {
            DocErrorKind::UnknownField
        } else {
            DocErrorKind::Shape
        };
        CaseError::Document(DocError::new(tool, &e.path, kind, e.message))
    })
}

/// The excerpt of `add_external_evidence` is held to [`Limit::ExcerptBytes`], as the CLI's
/// `--excerpt-file` is.
///
/// [`Limit::ExcerptBytes`]: crate::limits::Limit::ExcerptBytes
fn excerpt_within_cap(a: AddExternalEvidenceArgs) -> Result<AddExternalEvidenceArgs, CaseError> {
    crate::limits::Limit::ExcerptBytes
        .check(a.excerpt.len())
        .map_err(|e| {
            let kind = DocErrorKind::TooLarge;
            DocError::new("add_external_evidence", "excerpt", kind, e.to_string())
        })?;
    Ok(a)
}

impl RailCall {
    /// Parses the arguments of the rail tool `name`; `None` when `name` is not a rail tool.
    pub fn parse(name: &str, arguments: Value) -> Option<Result<RailCall, CaseError>> {
        let call = match name {
            tool::ADD_EVIDENCE => parse(name, arguments).map(RailCall::AddEvidence),
            tool::ADD_EXTERNAL_EVIDENCE => parse(name, arguments)
                .and_then(excerpt_within_cap)
                .map(RailCall::AddExternalEvidence),
            tool::ADD_CLAIM => parse(name, arguments).map(RailCall::AddClaim),
            tool::FREEZE_RESEARCH => parse(name, arguments).map(RailCall::FreezeResearch),
            tool::VALIDATE => parse(name, arguments).map(RailCall::Validate),
            tool::FINALIZE => parse(name, arguments).map(RailCall::Finalize),
            tool::SHOW => parse(name, arguments).map(RailCall::Show),
            _ => return None,
        };
        Some(call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_schema_is_a_closed_object() {
        for tool in RAIL_TOOLS {
            let schema = (tool.schema)();
            assert_eq!(schema["type"], "object", "{}", tool.name);
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
        }
    }

    #[test]
    fn an_excerpt_over_its_cap_is_refused_at_excerpt() {
        let cap = usize::try_from(crate::limits::Limit::ExcerptBytes.default_value()).unwrap();
        let call = |excerpt: String| {
            RailCall::parse(
                "add_external_evidence",
                json!({"source": "s", "uri": "u", "excerpt": excerpt, "idempotencyKey": "k"}),
            )
            .unwrap()
        };
        assert!(call("e".repeat(cap)).is_ok());
        match call("e".repeat(cap + 1)) {
            Err(CaseError::Document(d)) => {
                assert_eq!(
                    (d.field.as_str(), d.kind),
                    ("excerpt", DocErrorKind::TooLarge)
                );
                assert!(d.reason.contains("ANVIL_MAX_EXCERPT_BYTES"), "{d}");
            }
            other => panic!("expected a too_large rejection at `excerpt`, got {other:?}"),
        }
    }

    #[test]
    fn an_unknown_field_is_refused_with_its_path() {
        let err = RailCall::parse(
            "add_evidence",
            json!({"path": "a", "idempotencyKey": "k", "excerpt": "x"}),
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(err.kind(), "rejected_document");
        assert!(err.to_string().contains("excerpt"), "{err}");
    }
}
