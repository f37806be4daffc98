//! Typed refusals of the investigation tools.
//!
//! Invariant: a message names the request, field, path, table or column it refused, never
//! the bytes of a source, a row value or the text searched for, so a refusal can be shown
//! and journaled without leaking repository content. [`ToolError::kind`] is the stable code.

use std::path::PathBuf;

use crate::case::evidence::EvidenceError;
use crate::case::evidence::walk::WalkError;

/// Every code [`ToolError::kind`] can return.
pub const ERROR_KINDS: &[&str] = &[
    "request_too_large",
    "malformed_request",
    "unknown_field",
    "unsupported_format",
    "empty_batch",
    "batch_too_large",
    "duplicate_request_id",
    "unknown_operation",
    "invalid_arguments",
    "limit_exceeded",
    "wrong_run",
    "run_not_queryable",
    "stale_run",
    "not_a_run",
    "corrupt_run",
    "empty_path",
    "absolute_path",
    "path_escape",
    "symlink_escape",
    "missing_file",
    "not_a_file",
    "non_utf8_path",
    "out_of_scope",
    "concurrent_change",
    "binary_file",
    "not_utf8",
    "invalid_range",
    "too_many_files",
    "file_too_large",
    "selection_too_large",
    "too_many_rows",
    "unknown_table",
    "ambiguous_table",
    "invalid_snapshot",
    "unknown_column",
    "result_too_large",
    "io",
];

/// Why a batch was refused. A refusal always covers the whole batch.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("the request document is {size} bytes; the limit is {limit}")]
    RequestTooLarge { size: usize, limit: usize },
    /// Over [`crate::limits::Limit::ToolRequestBytes`] as read, before any parsing.
    #[error("the request document `{input}` {reason}")]
    RequestOverCap { input: String, reason: String },
    #[error("the request document is malformed at `{field}`: {reason}")]
    Malformed { field: String, reason: String },
    #[error("the request document has an unknown field `{field}`")]
    UnknownField { field: String },
    #[error("the request document is {format} v{version}; expected anvil-investigation-request v1")]
    UnsupportedFormat { format: String, version: String },
    #[error("the batch has no requests")]
    EmptyBatch,
    #[error("the batch has {count} requests; the limit is {limit}")]
    BatchTooLarge { count: usize, limit: usize },
    #[error("request id `{request}` is used more than once in the batch")]
    DuplicateRequestId { request: String },
    #[error("request `{request}` names an unknown operation `{operation}`")]
    UnknownOperation { request: String, operation: String },
    #[error("request `{request}` has invalid arguments at `{field}`: {reason}")]
    InvalidArguments {
        request: String,
        field: String,
        reason: String,
    },
    #[error("request `{request}` asks for {field} {value}; the limit is {limit}")]
    LimitExceeded {
        request: String,
        field: &'static str,
        value: u64,
        limit: u64,
    },
    #[error("the batch is for run `{requested}`, but this run is `{actual}`")]
    WrongRun { requested: String, actual: String },
    #[error("run `{run}` is {state}; a {state} run cannot be queried")]
    RunNotQueryable { run: String, state: &'static str },
    #[error("the run cannot be queried: {message}")]
    Run { kind: &'static str, message: String },
    #[error("request `{request}`: {source}")]
    Source {
        request: String,
        #[source]
        source: EvidenceError,
    },
    #[error("request `{request}`: `{path}` is a binary file (NUL byte at offset {offset})")]
    BinaryFile {
        request: String,
        path: String,
        offset: usize,
    },
    #[error("request `{request}`: `{path}` is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 {
        request: String,
        path: String,
        offset: usize,
    },
    #[error("request `{request}`: lines {start}-{end} of `{path}` are invalid: {reason}")]
    InvalidRange {
        request: String,
        path: String,
        start: u64,
        end: u64,
        reason: String,
    },
    #[error("the batch selects {count} distinct files; the limit is {limit} (name fewer paths)")]
    TooManyFiles { count: usize, limit: usize },
    #[error("request `{request}`: `{path}` is {size} bytes; the per-file limit is {limit}")]
    FileTooLarge {
        request: String,
        path: String,
        size: u64,
        limit: u64,
    },
    #[error("the batch selects {size} bytes of files; the limit is {limit}")]
    SelectionTooLarge { size: u64, limit: u64 },
    #[error("request `{request}`: snapshot `{path}` has {rows} rows; the limit is {limit}")]
    TooManyRows {
        request: String,
        path: String,
        rows: usize,
        limit: usize,
    },
    #[error("request `{request}`: no declared snapshot holds table `{table}`")]
    UnknownTable { request: String, table: String },
    #[error("request `{request}`: table `{table}` is declared by more than one snapshot: {paths}")]
    AmbiguousTable {
        request: String,
        table: String,
        paths: String,
    },
    #[error("snapshot `{path}` is invalid: {reason}")]
    InvalidSnapshot { path: String, reason: String },
    #[error("request `{request}`: table `{table}` has no column `{column}` ({field})")]
    UnknownColumn {
        request: String,
        table: String,
        column: String,
        field: &'static str,
    },
    #[error("the result document would be {size} bytes; the limit is {limit} (ask for less)")]
    ResultTooLarge { size: usize, limit: usize },
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ToolError {
    /// A stable, machine-readable code; one of [`ERROR_KINDS`].
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::RequestTooLarge { .. } | ToolError::RequestOverCap { .. } => {
                "request_too_large"
            }
            ToolError::Malformed { .. } => "malformed_request",
            ToolError::UnknownField { .. } => "unknown_field",
            ToolError::UnsupportedFormat { .. } => "unsupported_format",
            ToolError::EmptyBatch => "empty_batch",
            ToolError::BatchTooLarge { .. } => "batch_too_large",
            ToolError::DuplicateRequestId { .. } => "duplicate_request_id",
            ToolError::UnknownOperation { .. } => "unknown_operation",
            ToolError::InvalidArguments { .. } => "invalid_arguments",
            ToolError::LimitExceeded { .. } => "limit_exceeded",
            ToolError::WrongRun { .. } => "wrong_run",
            ToolError::RunNotQueryable { .. } => "run_not_queryable",
            ToolError::Run { kind, .. } => kind,
            ToolError::Source { source, .. } => source_kind(source),
            ToolError::BinaryFile { .. } => "binary_file",
            ToolError::NotUtf8 { .. } => "not_utf8",
            ToolError::InvalidRange { .. } => "invalid_range",
            ToolError::TooManyFiles { .. } => "too_many_files",
            ToolError::FileTooLarge { .. } => "file_too_large",
            ToolError::SelectionTooLarge { .. } => "selection_too_large",
            ToolError::TooManyRows { .. } => "too_many_rows",
            ToolError::UnknownTable { .. } => "unknown_table",
            ToolError::AmbiguousTable { .. } => "ambiguous_table",
            ToolError::InvalidSnapshot { .. } => "invalid_snapshot",
            ToolError::UnknownColumn { .. } => "unknown_column",
            ToolError::ResultTooLarge { .. } => "result_too_large",
            ToolError::Io { .. } => "io",
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> ToolError {
        let path = path.into();
        move |source| ToolError::Io {
            action,
            path,
            source,
        }
    }

    pub(crate) fn invalid(request: &str, field: &str, reason: impl Into<String>) -> ToolError {
        ToolError::InvalidArguments {
            request: request.to_string(),
            field: field.to_string(),
            reason: reason.into(),
        }
    }
}

/// The path refusals of evidence keep their codes; anything else the shared resolver can
/// say is an I/O-level problem for a query.
fn source_kind(e: &EvidenceError) -> &'static str {
    match e.kind() {
        k @ ("empty_path" | "absolute_path" | "path_escape" | "symlink_escape" | "missing_file"
        | "not_a_file" | "non_utf8_path" | "out_of_scope" | "concurrent_change") => k,
        _ => "io",
    }
}

impl From<WalkError> for ToolError {
    fn from(e: WalkError) -> Self {
        ToolError::Io {
            action: e.action,
            path: e.path,
            source: e.source,
        }
    }
}

impl From<crate::case::CaseError> for ToolError {
    fn from(e: crate::case::CaseError) -> ToolError {
        let kind = match e.kind() {
            "stale_run" => "stale_run",
            "not_a_run" => "not_a_run",
            "corrupt_run" => "corrupt_run",
            _ => "io",
        };
        ToolError::Run {
            kind,
            message: e.to_string(),
        }
    }
}
