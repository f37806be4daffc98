//! The arguments of each allowlisted operation, as read from a request. These structs are
//! the one source of the operations' argument schemas (see `schema.rs`).
//!
//! Invariant: arguments are strict — unknown names are refused (`deny_unknown_fields`),
//! and every default here is the documented one; semantic checks live in `request.rs`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

fn default_limit() -> u64 {
    20
}
fn default_true() -> bool {
    true
}

/// `source.list_files`: the files inside the inspect scopes, in path order.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListFilesArgs {
    /// Only paths matching this glob (`*` stays within one directory, `**` crosses).
    #[serde(default)]
    pub glob: Option<String>,
    /// Files to skip (for the next page, pass the previous `nextOffset`).
    #[serde(default)]
    pub offset: u64,
    /// Files to return, 1 to the per-query match limit (100 by default).
    #[serde(default = "default_limit")]
    pub limit: u64,
}

/// `source.find_text`: lines containing a literal text (not a regex).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindTextArgs {
    /// Repository-relative files to search, in this order; default: every file in scope.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// The literal text; one line, not empty.
    pub text: String,
    /// Match case exactly (default true).
    #[serde(default = "default_true")]
    pub case_sensitive: bool,
    #[serde(default)]
    pub offset: u64,
    #[serde(default = "default_limit")]
    pub limit: u64,
}

/// `source.find_symbol`: lines where an identifier occurs at token boundaries.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindSymbolArgs {
    /// Repository-relative files to search, in this order; default: every file in scope.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// One identifier: `[A-Za-z_][A-Za-z0-9_]*`.
    pub symbol: String,
    #[serde(default)]
    pub offset: u64,
    #[serde(default = "default_limit")]
    pub limit: u64,
}

/// `source.read_context`: lines `startLine..=endLine` (1-based, inclusive) of one file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadContextArgs {
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
}

/// `database.describe`: the declared table snapshots (one, or all when `table` is absent).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DescribeArgs {
    /// A table name, or the path of a raw-rows snapshot.
    #[serde(default)]
    pub table: Option<String>,
}

/// `database.lookup`: rows whose columns equal the filters exactly (typed equality).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LookupArgs {
    /// A table name, or the path of a raw-rows snapshot.
    pub table: String,
    /// Column → scalar; every filter must hold. `true`, `1`, `"1"` and `1.0` all differ.
    #[schemars(schema_with = "scalar_map_schema")]
    pub filters: Map<String, Value>,
    /// Columns to return (default: all); projection never changes a row's pointer.
    #[serde(default)]
    pub projection: Option<Vec<String>>,
    #[serde(default)]
    pub offset: u64,
    #[serde(default = "default_limit")]
    pub limit: u64,
}

/// `database.find_references`: rows where any of the named columns equals a value.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindReferencesArgs {
    pub table: String,
    /// The columns to compare; equality only, no foreign-key inference.
    pub search_columns: Vec<String>,
    /// A scalar compared with typed equality; SQL-like text is just text.
    #[schemars(schema_with = "scalar_schema")]
    pub value: Value,
    #[serde(default)]
    pub projection: Option<Vec<String>>,
    #[serde(default)]
    pub offset: u64,
    #[serde(default = "default_limit")]
    pub limit: u64,
}

fn scalar_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["null", "boolean", "number", "string"]})
}

fn scalar_map_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"type": ["null", "boolean", "number", "string"]}
    })
}
