//! The `anvil-investigation-result` v1 document: typed, per-operation results.
//!
//! Invariant: every match names its source by repository path and the sha256 of the whole
//! file it was read from, with 1-based line numbers (sources) or the JSON Pointer of the
//! original row (snapshots); every paged result says `total`, `truncated` and `nextOffset`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::skill::EvidenceKind;

use crate::case::ToolLimits;

pub const RESULT_FORMAT: &str = "anvil-investigation-result";
pub const RESULT_FORMAT_VERSION: u32 = 1;

/// The answer to one whole batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResultDoc {
    pub format: String,
    pub format_version: u32,
    pub run_id: String,
    /// sha256 of the run's case.json.
    pub case_hash: String,
    /// The repository revision recorded when the run was opened.
    pub source_revision: String,
    /// sha256 of the canonical request document.
    pub batch_hash: String,
    pub limits: ToolLimits,
    /// One per request, in request order.
    pub results: Vec<RequestResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RequestResult {
    pub request_id: String,
    /// sha256 of the canonical `{requestId, operation, arguments}`.
    pub request_hash: String,
    pub result: OperationResult,
}

/// The typed result of one operation, tagged by its name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "operation")]
pub enum OperationResult {
    #[serde(rename = "source.list_files")]
    ListFiles(ListFilesResult),
    #[serde(rename = "source.find_text")]
    FindText(FindTextResult),
    #[serde(rename = "source.find_symbol")]
    FindSymbol(FindSymbolResult),
    #[serde(rename = "source.read_context")]
    ReadContext(ReadContextResult),
    #[serde(rename = "database.describe")]
    Describe(DescribeResult),
    #[serde(rename = "database.lookup")]
    Lookup(LookupResult),
    #[serde(rename = "database.find_references")]
    FindReferences(FindReferencesResult),
}

/// The window of a paged result. `nextOffset` is set exactly when `truncated` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PageInfo {
    /// Everything that matched, across all pages.
    pub total: u64,
    pub offset: u64,
    pub limit: u64,
    pub returned: u64,
    /// More matches follow this page.
    pub truncated: bool,
    pub next_offset: Option<u64>,
}

impl PageInfo {
    pub(crate) fn of(
        total: usize,
        offset: usize,
        limit: usize,
    ) -> (PageInfo, std::ops::Range<usize>) {
        let start = offset.min(total);
        let end = start.saturating_add(limit).min(total);
        let truncated = end < total;
        (
            PageInfo {
                total: total as u64,
                offset: offset as u64,
                limit: limit as u64,
                returned: (end - start) as u64,
                truncated,
                next_offset: truncated.then_some(end as u64),
            },
            start..end,
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FileEntry {
    pub path: String,
    /// The evidence kind of the scope the path matched.
    pub kind: EvidenceKind,
    pub size: u64,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListFilesResult {
    pub glob: Option<String>,
    pub page: PageInfo,
    pub files: Vec<FileEntry>,
}

/// A file a search read, whether or not it matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckedFile {
    pub path: String,
    pub sha256: String,
    pub lines: u64,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LineMatch {
    pub path: String,
    pub sha256: String,
    /// 1-based.
    pub line: u64,
    /// Occurrences on this line.
    pub occurrences: u64,
    pub text: String,
    /// The line was longer than the per-line limit and `text` is its beginning.
    pub text_truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindTextResult {
    pub case_sensitive: bool,
    pub checked_files: Vec<CheckedFile>,
    pub page: PageInfo,
    pub matches: Vec<LineMatch>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindSymbolResult {
    pub symbol: String,
    pub checked_files: Vec<CheckedFile>,
    pub page: PageInfo,
    pub matches: Vec<LineMatch>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContextLine {
    /// 1-based.
    pub line: u64,
    pub text: String,
    pub text_truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadContextResult {
    pub path: String,
    pub kind: EvidenceKind,
    pub sha256: String,
    pub start_line: u64,
    pub end_line: u64,
    /// Lines in the whole file.
    pub line_count: u64,
    pub lines: Vec<ContextLine>,
}

/// How much of a table a snapshot claims to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    Partial,
    CompleteSnapshot,
    Unknown,
    SchemaOnly,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ColumnInfo {
    pub name: String,
    /// The declared type; absent for raw rows, whose columns are the keys found in them.
    #[serde(rename = "type")]
    pub column_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TableInfo {
    /// The declared table name; for raw rows, the snapshot's path.
    pub table: String,
    pub path: String,
    pub sha256: String,
    /// `anvil-database-snapshot` v1, or `raw-rows` (a bare array of row objects).
    pub snapshot_format: String,
    pub coverage: Coverage,
    pub columns: Vec<ColumnInfo>,
    pub row_count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DescribeResult {
    pub tables: Vec<TableInfo>,
    pub note: String,
}

/// One original row, projected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RowMatch {
    /// JSON Pointer of the row in the snapshot file (`/rows/2`, or `/2` for raw rows).
    pub pointer: String,
    /// For `find_references`: the searched columns that hold the value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matched_columns: Vec<String>,
    pub row: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LookupResult {
    pub table: String,
    pub path: String,
    pub sha256: String,
    pub coverage: Coverage,
    pub page: PageInfo,
    pub rows: Vec<RowMatch>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindReferencesResult {
    pub table: String,
    pub path: String,
    pub sha256: String,
    pub coverage: Coverage,
    pub search_columns: Vec<String>,
    pub page: PageInfo,
    pub rows: Vec<RowMatch>,
    pub note: String,
}
