//! JSON table snapshots and the database operations over them.
//!
//! How a case declares snapshots: case.json's `databaseSnapshots` lists them with the
//! sha256 each had at open (`case open --snapshot PATH`, or by default every file inside
//! the inspect scopes whose name ends in `.snapshot.json`); a declared snapshot whose bytes
//! changed since is refused, and an undeclared file is not a table. Its content is either `anvil-database-snapshot` v1 (the seed's `database-snapshot-v1`):
//! `{"format": "anvil-database-snapshot", "formatVersion": 1, "table": "payments",
//!   "columns": [{"name": "id", "type": "integer"}], "rows": [{"id": 42}],
//!   "coverage": "partial" | "complete_snapshot" | "unknown" | "schema_only"}`
//! or a bare array of row objects (coverage `unknown`, no table identity: it is addressed
//! by its path, and its columns are the keys that occur in its rows).
//!
//! Invariant: a snapshot is accepted only whole and consistent — no duplicate column, no
//! row with an undeclared column, no rows in a `schema_only` descriptor, no more rows than
//! the limit — and rows are compared with typed JSON equality (`true`, `1`, `"1"` and
//! `1.0` all differ); a value is data, never a query. A row is named by its JSON Pointer in
//! the original file, which projection never changes.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::ToolError;
use super::files::Loaded;
use super::request::Page;
use super::result::{
    ColumnInfo, Coverage, FindReferencesResult, LookupResult, PageInfo, RowMatch, TableInfo,
};
use crate::case::ToolLimits;

pub const SNAPSHOT_FORMAT: &str = "anvil-database-snapshot";
pub const SNAPSHOT_FORMAT_VERSION: u32 = 1;
const RAW_FORMAT: &str = "raw-rows";

pub(crate) const DESCRIBE_NOTE: &str = "packaged point-in-time snapshots, not a live database; \
a row missing from a snapshot is not evidence that it is missing from the database";
pub(crate) const LOOKUP_NOTE: &str = "exact typed equality on every filter (true, 1, \"1\" and \
1.0 differ); results cover this snapshot only";
pub(crate) const REFERENCES_NOTE: &str = "rows whose named columns hold an equal value; this \
does not assert a foreign-key relationship; results cover this snapshot only";

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawSnapshot {
    format: String,
    format_version: u32,
    table: String,
    columns: Vec<RawColumn>,
    #[serde(default)]
    rows: Vec<Value>,
    coverage: Coverage,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawColumn {
    name: String,
    #[serde(rename = "type")]
    column_type: String,
}

/// A validated snapshot.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub info: TableInfo,
    /// The row array's JSON Pointer prefix: `/rows` or empty.
    pointer_base: &'static str,
    rows: Vec<Map<String, Value>>,
}

/// Why a descriptor that deserialized is still refused: another format, an empty table
/// name, an empty or repeated column name, or rows under `schema_only` coverage.
fn check_descriptor(raw: &RawSnapshot) -> Result<(), String> {
    if raw.format != SNAPSHOT_FORMAT || raw.format_version != SNAPSHOT_FORMAT_VERSION {
        return Err(format!(
            "expected {SNAPSHOT_FORMAT} v{SNAPSHOT_FORMAT_VERSION}"
        ));
    }
    if raw.table.trim().is_empty() {
        return Err("the table name is empty".into());
    }
    let mut names = BTreeSet::new();
    for c in &raw.columns {
        if c.name.is_empty() || !names.insert(c.name.as_str()) {
            return Err("a column name is empty or declared twice".into());
        }
    }
    if raw.coverage == Coverage::SchemaOnly && !raw.rows.is_empty() {
        return Err("a schema_only descriptor must not contain rows".into());
    }
    Ok(())
}

/// Parses and validates one snapshot file.
pub(crate) fn parse(
    request: &str,
    file: &Loaded,
    limits: &ToolLimits,
) -> Result<Snapshot, ToolError> {
    let invalid = |reason: String| ToolError::InvalidSnapshot {
        path: file.rel.clone(),
        reason,
    };
    let value: Value = crate::json_path::parse(file.text(request)?).map_err(|e| {
        invalid(if e.path == "." {
            e.message.replacen("not valid JSON", "not JSON", 1)
        } else {
            e.to_string()
        })
    })?;
    let (table, format, coverage, declared, raw_rows, base) = match value {
        Value::Array(rows) => (
            file.rel.clone(),
            RAW_FORMAT,
            Coverage::Unknown,
            None,
            rows,
            "",
        ),
        Value::Object(_) => {
            let (table, coverage, columns, rows) = descriptor(value).map_err(invalid)?;
            (
                table,
                SNAPSHOT_FORMAT,
                coverage,
                Some(columns),
                rows,
                "/rows",
            )
        }
        _ => {
            return Err(invalid(
                "a snapshot is an object or an array of rows".into(),
            ));
        }
    };
    if raw_rows.len() > limits.database_rows {
        return Err(ToolError::TooManyRows {
            request: request.into(),
            path: file.rel.clone(),
            rows: raw_rows.len(),
            limit: limits.database_rows,
        });
    }
    let Rows { rows, found } = check_rows(raw_rows, declared.as_deref(), base).map_err(invalid)?;
    Ok(Snapshot {
        info: TableInfo {
            table,
            path: file.rel.clone(),
            sha256: file.sha256.clone(),
            snapshot_format: format.into(),
            coverage,
            columns: declared.unwrap_or(found),
            row_count: rows.len() as u64,
        },
        pointer_base: base,
        rows,
    })
}

/// The table name, coverage, declared columns and raw rows of an `anvil-database-snapshot`
/// descriptor (`value` is an object), or why it is refused.
fn descriptor(value: Value) -> Result<(String, Coverage, Vec<ColumnInfo>, Vec<Value>), String> {
    let columns = value.get("columns").and_then(Value::as_array);
    if columns.is_some_and(|cs| cs.iter().any(|c| !c.is_object())) {
        return Err("a column must be a JSON object".into());
    }
    let raw: RawSnapshot = crate::json_path::deserialize(value)
        .map_err(|e| format!("at `{}`: {}", e.path, shape(&e.message)))?;
    check_descriptor(&raw)?;
    let columns = raw
        .columns
        .into_iter()
        .map(|c| ColumnInfo {
            name: c.name,
            column_type: Some(c.column_type),
        })
        .collect::<Vec<_>>();
    Ok((raw.table, raw.coverage, columns, raw.rows))
}

/// A snapshot's rows, checked.
struct Rows {
    rows: Vec<Map<String, Value>>,
    /// The columns that occur in the rows, in first-seen order (none when declared).
    found: Vec<ColumnInfo>,
}

/// The rows as objects, with the columns that occur in them (in first-seen order) when
/// none are `declared`; refuses a row that is not an object or has an undeclared column.
/// `base` is the row array's JSON Pointer, for the reason.
fn check_rows(
    raw_rows: Vec<Value>,
    declared: Option<&[ColumnInfo]>,
    base: &str,
) -> Result<Rows, String> {
    let mut rows = Vec::with_capacity(raw_rows.len());
    let mut found: Vec<ColumnInfo> = Vec::new();
    for (i, row) in raw_rows.into_iter().enumerate() {
        let Value::Object(row) = row else {
            return Err(format!("row {base}/{i} is not an object"));
        };
        for key in row.keys() {
            match declared {
                Some(cols) if !cols.iter().any(|c| &c.name == key) => {
                    return Err(format!(
                        "row {base}/{i} has a column the descriptor does not declare"
                    ));
                }
                None if !found.iter().any(|c| &c.name == key) => found.push(ColumnInfo {
                    name: key.clone(),
                    column_type: None,
                }),
                Some(_) | None => {}
            }
        }
        rows.push(row);
    }
    Ok(Rows { rows, found })
}

/// A deserialisation message without the offending value (it is snapshot data).
fn shape(message: &str) -> &'static str {
    if message.starts_with("unknown field") {
        "unknown field"
    } else if message.starts_with("missing field") {
        "missing field"
    } else if message.starts_with("unknown variant") {
        "not one of the allowed values"
    } else {
        "wrong type or value"
    }
}

fn short(s: &str) -> String {
    s.chars().take(120).collect()
}

/// The one snapshot holding `table` (a declared name, or a raw snapshot's path).
pub(crate) fn find<'a>(
    request: &str,
    snapshots: &'a [Snapshot],
    table: &str,
) -> Result<&'a Snapshot, ToolError> {
    let hits: Vec<&Snapshot> = snapshots.iter().filter(|s| s.info.table == table).collect();
    match hits.as_slice() {
        [one] => Ok(one),
        [] => Err(ToolError::UnknownTable {
            request: request.into(),
            table: short(table),
        }),
        many => Err(ToolError::AmbiguousTable {
            request: request.into(),
            table: short(table),
            paths: many
                .iter()
                .map(|s| s.info.path.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Refuses any named column the snapshot does not have.
pub(crate) fn check_columns<'c>(
    request: &str,
    snap: &Snapshot,
    field: &'static str,
    columns: impl IntoIterator<Item = &'c String>,
) -> Result<(), ToolError> {
    for c in columns {
        if !snap.info.columns.iter().any(|k| &k.name == c) {
            return Err(ToolError::UnknownColumn {
                request: request.into(),
                table: short(&snap.info.table),
                column: short(c),
                field,
            });
        }
    }
    Ok(())
}

fn project(row: &Map<String, Value>, projection: Option<&[String]>) -> Map<String, Value> {
    match projection {
        None => row.clone(),
        Some(cols) => cols
            .iter()
            .filter_map(|c| row.get(c).map(|v| (c.clone(), v.clone())))
            .collect(),
    }
}

/// Typed JSON equality: `serde_json` keeps `1` (an integer) and `1.0` (a float) apart, and
/// never compares across types.
fn equal(a: &Value, b: &Value) -> bool {
    a == b
}

pub(crate) fn lookup(
    snap: &Snapshot,
    filters: &[(String, Value)],
    projection: Option<&[String]>,
    page: Page,
) -> LookupResult {
    let hits: Vec<usize> = (0..snap.rows.len())
        .filter(|&i| {
            filters
                .iter()
                .all(|(c, v)| snap.rows[i].get(c).is_some_and(|x| equal(x, v)))
        })
        .collect();
    let (info, range) = PageInfo::of(hits.len(), page.offset, page.limit);
    LookupResult {
        table: snap.info.table.clone(),
        path: snap.info.path.clone(),
        sha256: snap.info.sha256.clone(),
        coverage: snap.info.coverage,
        page: info,
        rows: hits[range]
            .iter()
            .map(|&i| RowMatch {
                pointer: format!("{}/{i}", snap.pointer_base),
                matched_columns: vec![],
                row: project(&snap.rows[i], projection),
            })
            .collect(),
        note: LOOKUP_NOTE.into(),
    }
}

pub(crate) fn find_references(
    snap: &Snapshot,
    columns: &[String],
    value: &Value,
    projection: Option<&[String]>,
    page: Page,
) -> FindReferencesResult {
    let hits: Vec<(usize, Vec<String>)> = snap
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let matched: Vec<String> = columns
                .iter()
                .filter(|c| row.get(*c).is_some_and(|x| equal(x, value)))
                .cloned()
                .collect();
            (!matched.is_empty()).then_some((i, matched))
        })
        .collect();
    let (info, range) = PageInfo::of(hits.len(), page.offset, page.limit);
    FindReferencesResult {
        table: snap.info.table.clone(),
        path: snap.info.path.clone(),
        sha256: snap.info.sha256.clone(),
        coverage: snap.info.coverage,
        search_columns: columns.to_vec(),
        page: info,
        rows: hits[range]
            .iter()
            .map(|(i, matched)| RowMatch {
                pointer: format!("{}/{i}", snap.pointer_base),
                matched_columns: matched.clone(),
                row: project(&snap.rows[*i], projection),
            })
            .collect(),
        note: REFERENCES_NOTE.into(),
    }
}
