//! The `anvil-investigation-request` v1 document: strict raw types, then validation into a
//! resolved [`Batch`] with no filesystem access.
//!
//! Invariant: a document is either turned whole into a [`Batch`] whose every request is a
//! known operation with valid, in-limit arguments and a unique id, or refused whole with a
//! typed [`ToolError`]. Nothing here reads the run or the repository.

use std::collections::BTreeSet;

use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::{
    DescribeArgs, FindReferencesArgs, FindSymbolArgs, FindTextArgs, ListFilesArgs, LookupArgs,
    ReadContextArgs,
};
use super::error::ToolError;
use crate::canon::canonical_hash;
use crate::case::ToolLimits;

pub const REQUEST_FORMAT: &str = "anvil-investigation-request";
pub const REQUEST_FORMAT_VERSION: u32 = 1;

/// Longest accepted request id; ids are `[A-Za-z0-9_.-]`, so they are safe to echo.
pub const MAX_REQUEST_ID: usize = 64;

/// The request document as read, before validation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawRequestDoc {
    /// Always `anvil-investigation-request`.
    pub format: String,
    /// Always 1.
    pub format_version: u32,
    /// The id of the run being investigated; a batch for another run is refused.
    pub run_id: String,
    /// The queries, answered in this order.
    pub requests: Vec<RawRequest>,
}

/// One query of a batch, before its arguments are checked against its operation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawRequest {
    /// Unique in the batch; 1 to 64 of `A-Z a-z 0-9 _ . -`.
    pub request_id: String,
    /// One of the allowlisted operations (see `operations()`).
    pub operation: String,
    /// The operation's arguments.
    pub arguments: Value,
}

/// A validated page window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Page {
    pub offset: usize,
    pub limit: usize,
}

/// A validated operation.
#[derive(Debug)]
pub(crate) enum Op {
    ListFiles {
        glob: Option<(String, GlobMatcher)>,
        page: Page,
    },
    FindText {
        paths: Option<Vec<String>>,
        text: String,
        case_sensitive: bool,
        page: Page,
    },
    FindSymbol {
        paths: Option<Vec<String>>,
        symbol: String,
        page: Page,
    },
    ReadContext {
        path: String,
        start: u32,
        end: u32,
    },
    Describe {
        table: Option<String>,
    },
    Lookup {
        table: String,
        filters: Vec<(String, Value)>,
        projection: Option<Vec<String>>,
        page: Page,
    },
    FindReferences {
        table: String,
        columns: Vec<String>,
        value: Value,
        projection: Option<Vec<String>>,
        page: Page,
    },
}

impl Op {
    pub(crate) fn is_database(&self) -> bool {
        matches!(
            self,
            Op::Describe { .. } | Op::Lookup { .. } | Op::FindReferences { .. }
        )
    }
}

/// One validated request.
#[derive(Debug)]
pub(crate) struct Item {
    pub id: String,
    pub hash: String,
    pub op: Op,
}

/// A validated batch.
#[derive(Debug)]
pub(crate) struct Batch {
    pub run_id: String,
    pub hash: String,
    pub items: Vec<Item>,
}

/// The operation names, in the order they are documented.
pub const OPERATIONS: [&str; 7] = [
    "source.list_files",
    "source.find_text",
    "source.find_symbol",
    "source.read_context",
    "database.describe",
    "database.lookup",
    "database.find_references",
];

/// Validates a request document into a [`Batch`], or refuses it whole. No I/O.
pub(crate) fn parse(doc: &Value, limits: &ToolLimits) -> Result<Batch, ToolError> {
    let size = serde_json::to_string(doc).map_or(0, |s| s.len());
    if size > limits.request_bytes {
        return Err(ToolError::RequestTooLarge {
            size,
            limit: limits.request_bytes,
        });
    }
    let Some(top) = doc.as_object() else {
        return Err(ToolError::Malformed {
            field: ".".into(),
            reason: "the request document must be a JSON object".into(),
        });
    };
    // The format is checked first, so a newer document is named as such, not as malformed.
    let format = top.get("format");
    let version = top.get("formatVersion");
    if format.is_some_and(|f| f != REQUEST_FORMAT)
        || version.is_some_and(|v| v.as_u64() != Some(REQUEST_FORMAT_VERSION.into()))
    {
        return Err(ToolError::UnsupportedFormat {
            format: short(&format.map(Value::to_string).unwrap_or_default()),
            version: short(&version.map(Value::to_string).unwrap_or_default()),
        });
    }
    // serde reads a struct from an array too; every object of the document must be one.
    if let Some(i) = top
        .get("requests")
        .and_then(Value::as_array)
        .and_then(|rs| rs.iter().position(|r| !r.is_object()))
    {
        return Err(ToolError::Malformed {
            field: format!("requests[{i}]"),
            reason: "a request must be a JSON object".into(),
        });
    }
    let raw: RawRequestDoc =
        crate::json_path::deserialize(doc.clone()).map_err(|e| shape_error("", &e))?;
    if raw.format != REQUEST_FORMAT || raw.format_version != REQUEST_FORMAT_VERSION {
        return Err(ToolError::UnsupportedFormat {
            format: short(&raw.format),
            version: raw.format_version.to_string(),
        });
    }

    if raw.requests.is_empty() {
        return Err(ToolError::EmptyBatch);
    }
    if raw.requests.len() > limits.batch_requests {
        return Err(ToolError::BatchTooLarge {
            count: raw.requests.len(),
            limit: limits.batch_requests,
        });
    }
    let mut seen = BTreeSet::new();
    let mut items = Vec::with_capacity(raw.requests.len());
    for (i, req) in raw.requests.into_iter().enumerate() {
        check_request_id(i, &req.request_id)?;
        if !seen.insert(req.request_id.clone()) {
            return Err(ToolError::DuplicateRequestId {
                request: req.request_id,
            });
        }
        let hash = canonical_hash(&serde_json::json!({
            "requestId": req.request_id,
            "operation": req.operation,
            "arguments": req.arguments,
        }));
        let op = parse_op(i, &req, limits)?;
        items.push(Item {
            id: req.request_id,
            hash,
            op,
        });
    }
    Ok(Batch {
        run_id: raw.run_id,
        hash: canonical_hash(doc),
        items,
    })
}

fn check_request_id(i: usize, id: &str) -> Result<(), ToolError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_REQUEST_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        return Ok(());
    }
    Err(ToolError::Malformed {
        field: format!("requests[{i}].requestId"),
        reason: format!("a request id is 1 to {MAX_REQUEST_ID} of A-Z a-z 0-9 _ . -"),
    })
}

/// Maps a strict-deserialisation failure under `prefix` to an unknown-field or shape code.
fn shape_error(prefix: &str, e: &crate::json_path::PathError) -> ToolError {
    let field = if prefix.is_empty() {
        e.path.clone()
    } else if e.path == "." {
        prefix.to_string()
    } else {
        format!("{prefix}.{}", e.path)
    };
    if e.message.starts_with("unknown field") {
        ToolError::UnknownField { field }
    } else {
        ToolError::Malformed {
            field,
            reason: short(&e.message),
        }
    }
}

/// Caller text shown in a message, bounded.
fn short(s: &str) -> String {
    if s.chars().count() <= 64 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(64).collect::<String>())
    }
}

fn args<T: serde::de::DeserializeOwned>(i: usize, req: &RawRequest) -> Result<T, ToolError> {
    if !req.arguments.is_object() {
        return Err(ToolError::InvalidArguments {
            request: req.request_id.clone(),
            field: format!("requests[{i}].arguments"),
            reason: "the arguments must be a JSON object".into(),
        });
    }
    crate::json_path::deserialize(req.arguments.clone()).map_err(|e| {
        match shape_error(&format!("requests[{i}].arguments"), &e) {
            ToolError::Malformed { field, reason } => ToolError::InvalidArguments {
                request: req.request_id.clone(),
                field,
                reason,
            },
            other => other,
        }
    })
}

fn parse_op(i: usize, req: &RawRequest, limits: &ToolLimits) -> Result<Op, ToolError> {
    let id = req.request_id.as_str();
    Ok(match req.operation.as_str() {
        "source.list_files" => {
            let a: ListFilesArgs = args(i, req)?;
            let glob = match a.glob {
                None => None,
                Some(g) => {
                    let m = GlobBuilder::new(&g)
                        .literal_separator(true)
                        .build()
                        .map_err(|_| ToolError::invalid(id, "glob", "not a valid glob"))?
                        .compile_matcher();
                    Some((g, m))
                }
            };
            Op::ListFiles {
                glob,
                page: page(id, a.offset, a.limit, limits)?,
            }
        }
        "source.find_text" => {
            let a: FindTextArgs = args(i, req)?;
            if a.text.is_empty() || a.text.contains(['\n', '\r']) {
                return Err(ToolError::invalid(
                    id,
                    "text",
                    "the text must be one non-empty line",
                ));
            }
            if a.text.chars().count() > limits.line_chars {
                return Err(too_many(
                    id,
                    "text characters",
                    a.text.chars().count(),
                    limits.line_chars,
                ));
            }
            Op::FindText {
                paths: paths(id, a.paths, limits)?,
                text: a.text,
                case_sensitive: a.case_sensitive,
                page: page(id, a.offset, a.limit, limits)?,
            }
        }
        "source.find_symbol" => {
            let a: FindSymbolArgs = args(i, req)?;
            if !is_identifier(&a.symbol) || a.symbol.len() > 256 {
                return Err(ToolError::invalid(
                    id,
                    "symbol",
                    "the symbol must be one identifier: [A-Za-z_][A-Za-z0-9_]*, at most 256 characters",
                ));
            }
            Op::FindSymbol {
                paths: paths(id, a.paths, limits)?,
                symbol: a.symbol,
                page: page(id, a.offset, a.limit, limits)?,
            }
        }
        "source.read_context" => {
            let a: ReadContextArgs = args(i, req)?;
            non_empty(id, "path", &a.path)?;
            if a.start_line == 0 || a.start_line > a.end_line {
                return Err(ToolError::invalid(
                    id,
                    "startLine",
                    "lines are 1-based and startLine must not be after endLine",
                ));
            }
            let count = a.end_line - a.start_line + 1;
            if count > u64::from(limits.context_lines) {
                return Err(ToolError::LimitExceeded {
                    request: id.into(),
                    field: "context lines",
                    value: count,
                    limit: limits.context_lines.into(),
                });
            }
            let line = |n: u64| {
                u32::try_from(n).map_err(|_| ToolError::invalid(id, "endLine", "too large"))
            };
            Op::ReadContext {
                path: a.path,
                start: line(a.start_line)?,
                end: line(a.end_line)?,
            }
        }
        "database.describe" => {
            let a: DescribeArgs = args(i, req)?;
            if let Some(t) = &a.table {
                non_empty(id, "table", t)?;
            }
            Op::Describe { table: a.table }
        }
        "database.lookup" => {
            let a: LookupArgs = args(i, req)?;
            non_empty(id, "table", &a.table)?;
            if a.filters.is_empty() {
                return Err(ToolError::invalid(
                    id,
                    "filters",
                    "give at least one filter",
                ));
            }
            let mut filters = Vec::new();
            for (column, value) in a.filters {
                scalar(id, "filters", &value)?;
                filters.push((column, value));
            }
            Op::Lookup {
                table: a.table,
                filters,
                projection: columns(id, "projection", a.projection)?,
                page: page(id, a.offset, a.limit, limits)?,
            }
        }
        "database.find_references" => {
            let a: FindReferencesArgs = args(i, req)?;
            non_empty(id, "table", &a.table)?;
            scalar(id, "value", &a.value)?;
            let search = columns(id, "searchColumns", Some(a.search_columns))?;
            Op::FindReferences {
                table: a.table,
                columns: search.unwrap_or_default(),
                value: a.value,
                projection: columns(id, "projection", a.projection)?,
                page: page(id, a.offset, a.limit, limits)?,
            }
        }
        other => {
            return Err(ToolError::UnknownOperation {
                request: id.into(),
                operation: short(other),
            });
        }
    })
}

fn too_many(id: &str, field: &'static str, value: usize, limit: usize) -> ToolError {
    ToolError::LimitExceeded {
        request: id.into(),
        field,
        value: value as u64,
        limit: limit as u64,
    }
}

fn page(id: &str, offset: u64, limit: u64, limits: &ToolLimits) -> Result<Page, ToolError> {
    if limit == 0 {
        return Err(ToolError::invalid(id, "limit", "limit must be at least 1"));
    }
    if limit > limits.matches_per_query as u64 {
        return Err(ToolError::LimitExceeded {
            request: id.into(),
            field: "limit",
            value: limit,
            limit: limits.matches_per_query as u64,
        });
    }
    let offset =
        usize::try_from(offset).map_err(|_| ToolError::invalid(id, "offset", "too large"))?;
    // At most `matches_per_query` (checked above), so it fits.
    let limit = usize::try_from(limit).map_err(|_| ToolError::invalid(id, "limit", "too large"))?;
    Ok(Page { offset, limit })
}

fn non_empty(id: &str, field: &str, s: &str) -> Result<(), ToolError> {
    if s.trim().is_empty() {
        return Err(ToolError::invalid(id, field, "must not be empty"));
    }
    Ok(())
}

fn paths(
    id: &str,
    paths: Option<Vec<String>>,
    limits: &ToolLimits,
) -> Result<Option<Vec<String>>, ToolError> {
    let Some(paths) = paths else {
        return Ok(None);
    };
    if paths.is_empty() {
        return Err(ToolError::invalid(
            id,
            "paths",
            "give at least one path, or leave paths out to search every file in scope",
        ));
    }
    if paths.len() > limits.selected_files {
        return Err(too_many(id, "paths", paths.len(), limits.selected_files));
    }
    let mut seen = BTreeSet::new();
    for p in &paths {
        non_empty(id, "paths", p)?;
        if !seen.insert(p.as_str()) {
            return Err(ToolError::invalid(id, "paths", "a path is named twice"));
        }
    }
    Ok(Some(paths))
}

fn columns(
    id: &str,
    field: &'static str,
    cols: Option<Vec<String>>,
) -> Result<Option<Vec<String>>, ToolError> {
    let Some(cols) = cols else {
        return Ok(None);
    };
    if cols.is_empty() {
        return Err(ToolError::invalid(id, field, "give at least one column"));
    }
    let mut seen = BTreeSet::new();
    for c in &cols {
        non_empty(id, field, c)?;
        if !seen.insert(c.as_str()) {
            return Err(ToolError::invalid(id, field, "a column is named twice"));
        }
    }
    Ok(Some(cols))
}

fn scalar(id: &str, field: &str, v: &Value) -> Result<(), ToolError> {
    if v.is_array() || v.is_object() {
        return Err(ToolError::invalid(
            id,
            field,
            "values are scalars: null, a boolean, a number or a string",
        ));
    }
    Ok(())
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
