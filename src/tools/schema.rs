//! JSON Schemas of the request and result documents and the operation catalogue, generated
//! from the Rust types with schemars.
//!
//! Invariant: there is one source of truth per document — the argument structs of
//! [`super::args`] and the result types of [`super::result`]; the schemas and the
//! operation list are derived from them, never written by hand beside them.

use schemars::JsonSchema;
use serde_json::{Value, json};

use super::args::{
    DescribeArgs, FindReferencesArgs, FindSymbolArgs, FindTextArgs, ListFilesArgs, LookupArgs,
    ReadContextArgs,
};
use super::request::{MAX_REQUEST_ID, REQUEST_FORMAT, REQUEST_FORMAT_VERSION, RawRequestDoc};
use super::result::{RESULT_FORMAT, RESULT_FORMAT_VERSION, ResultDoc};
use crate::case::ToolLimits;

/// One allowlisted operation: its name, what it does, and the JSON Schema of its arguments.
#[derive(Debug, Clone)]
pub struct OperationInfo {
    /// e.g. `source.find_text`.
    pub name: &'static str,
    pub description: &'static str,
    pub arguments_schema: Value,
}

fn op<T: JsonSchema>(name: &'static str, description: &'static str) -> OperationInfo {
    let mut schema = schemars::schema_for!(T).to_value();
    if let Some(o) = schema.as_object_mut() {
        o.remove("$schema");
    }
    OperationInfo {
        name,
        description,
        arguments_schema: schema,
    }
}

/// The allowlist, in documentation order.
#[must_use]
pub fn operations() -> Vec<OperationInfo> {
    vec![
        op::<ListFilesArgs>(
            "source.list_files",
            "List the files inside the case's inspect scopes (path order), with evidence kind, size and sha256; optionally filtered by a glob; paged.",
        ),
        op::<FindTextArgs>(
            "source.find_text",
            "Find lines containing a literal text (not a regex), optionally ignoring case, in the named files (in that order) or every file in scope; paged, with 1-based line numbers and each file's sha256.",
        ),
        op::<FindSymbolArgs>(
            "source.find_symbol",
            "Find lines where an identifier occurs at token boundaries; uses, definitions, comments and strings alike (not a parser); paged.",
        ),
        op::<ReadContextArgs>(
            "source.read_context",
            "Read lines startLine..endLine (1-based, inclusive, at most 200) of one file in scope, with its sha256.",
        ),
        op::<DescribeArgs>(
            "database.describe",
            "Describe the JSON table snapshots declared in scope (`*.snapshot.json`): table, path, sha256, coverage, columns, row count.",
        ),
        op::<LookupArgs>(
            "database.lookup",
            "Rows of one snapshot whose columns equal every filter with typed equality (true, 1, \"1\" and 1.0 differ); each row with its JSON Pointer; paged.",
        ),
        op::<FindReferencesArgs>(
            "database.find_references",
            "Rows of one snapshot where any named column equals a value (typed equality; not a foreign-key claim); paged.",
        ),
    ]
}

/// The request document's schema: the envelope from [`RawRequestDoc`], each request one of
/// the operations with its generated argument schema.
pub fn request_schema() -> Value {
    let mut root = schemars::schema_for!(RawRequestDoc).to_value();
    let limits = ToolLimits::default();
    let items: Vec<Value> = operations()
        .into_iter()
        .map(|o| {
            json!({
                "type": "object",
                "description": o.description,
                "additionalProperties": false,
                "required": ["requestId", "operation", "arguments"],
                "properties": {
                    "requestId": {
                        "type": "string",
                        "pattern": format!("^[A-Za-z0-9_.-]{{1,{MAX_REQUEST_ID}}}$"),
                    },
                    "operation": {"const": o.name},
                    "arguments": o.arguments_schema,
                },
            })
        })
        .collect();
    if let Some(o) = root.as_object_mut() {
        o.remove("$defs");
        o.insert(
            "title".into(),
            json!(format!("{REQUEST_FORMAT} v{REQUEST_FORMAT_VERSION}")),
        );
    }
    if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert("format".into(), json!({"const": REQUEST_FORMAT}));
        props.insert(
            "formatVersion".into(),
            json!({"const": REQUEST_FORMAT_VERSION}),
        );
        props.insert(
            "requests".into(),
            json!({
                "type": "array",
                "minItems": 1,
                "maxItems": limits.batch_requests,
                "items": {"oneOf": items},
            }),
        );
    }
    root
}

/// The result document's schema, generated from [`ResultDoc`].
pub fn result_schema() -> Value {
    let mut root = schemars::schema_for!(ResultDoc).to_value();
    if let Some(o) = root.as_object_mut() {
        o.insert(
            "title".into(),
            json!(format!("{RESULT_FORMAT} v{RESULT_FORMAT_VERSION}")),
        );
    }
    if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert("format".into(), json!({"const": RESULT_FORMAT}));
        props.insert(
            "formatVersion".into(),
            json!({"const": RESULT_FORMAT_VERSION}),
        );
    }
    root
}
