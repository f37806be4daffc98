//! The wire shape of a claim: an atomic, sourced assertion referencing frozen artifacts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One claim as written in `output/claims.json`. It carries no excerpt of its own: the
/// excerpt is whatever the engine read at the artifact's coordinate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawClaim {
    pub id: String,
    pub predicate: String,
    pub value: Value,
    pub artifact_ids: Vec<String>,
    pub confidence: f64,
}
