//! Operational limits of the investigation tools (defaults from investigation-tools-v1).
//! A case owns them: case.json records its `toolLimits` overrides, `case open` refuses a bad
//! one, and the tools read the limits from here.
//!
//! Invariant: a limit is a refusal threshold, never a silent cut: input beyond a limit
//! rejects the whole batch with a typed code. The one exception is per-line display, where
//! a long line is shortened and marked `textTruncated` (its hash still covers the file).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Limits applied to one batch. [`ToolLimits::default`] holds the seed's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolLimits {
    /// Bytes of the request document (compact JSON).
    pub request_bytes: usize,
    /// Requests per batch.
    pub batch_requests: usize,
    /// Distinct files the batch reads.
    pub selected_files: usize,
    /// Bytes of any one file read.
    pub file_bytes: u64,
    /// Combined bytes of the distinct files read.
    pub selected_bytes: u64,
    /// Rows of any one database snapshot.
    pub database_rows: usize,
    /// Matches (files, lines or rows) returned by one request: the largest `limit`.
    pub matches_per_query: usize,
    /// Lines returned by one `source.read_context`.
    pub context_lines: u32,
    /// Characters of one returned source line before it is marked `textTruncated`.
    pub line_chars: usize,
    /// Bytes of the whole result document (compact JSON).
    pub result_bytes: usize,
}

impl ToolLimits {
    /// The limit names a case may override (camelCase, as in case.json `toolLimits`).
    pub const NAMES: [&'static str; 10] = [
        "requestBytes",
        "batchRequests",
        "selectedFiles",
        "fileBytes",
        "selectedBytes",
        "databaseRows",
        "matchesPerQuery",
        "contextLines",
        "lineChars",
        "resultBytes",
    ];

    /// These limits with a case's overrides applied. An unknown name or a zero value is
    /// refused, never ignored.
    ///
    /// # Errors
    ///
    /// A message naming the limit when an override is zero, too large for its field, or
    /// names an unknown limit (the known names are listed).
    pub fn with_overrides(
        &self,
        overrides: &std::collections::BTreeMap<String, u64>,
    ) -> Result<ToolLimits, String> {
        let mut out = *self;
        for (name, &value) in overrides {
            if value == 0 {
                return Err(format!("`{name}` must be at least 1"));
            }
            let small = || usize::try_from(value).map_err(|_| format!("`{name}` is too large"));
            match name.as_str() {
                "requestBytes" => out.request_bytes = small()?,
                "batchRequests" => out.batch_requests = small()?,
                "selectedFiles" => out.selected_files = small()?,
                "fileBytes" => out.file_bytes = value,
                "selectedBytes" => out.selected_bytes = value,
                "databaseRows" => out.database_rows = small()?,
                "matchesPerQuery" => out.matches_per_query = small()?,
                "contextLines" => {
                    out.context_lines =
                        u32::try_from(value).map_err(|_| format!("`{name}` is too large"))?;
                }
                "lineChars" => out.line_chars = small()?,
                "resultBytes" => out.result_bytes = small()?,
                other => {
                    return Err(format!(
                        "unknown limit `{other}`; known: {}",
                        Self::NAMES.join(", ")
                    ));
                }
            }
        }
        Ok(out)
    }
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            request_bytes: 64 * 1024,
            batch_requests: 16,
            selected_files: 64,
            file_bytes: 8 * 1024 * 1024,
            selected_bytes: 32 * 1024 * 1024,
            database_rows: 100_000,
            matches_per_query: 100,
            context_lines: 200,
            line_chars: 4096,
            result_bytes: 2 * 1024 * 1024,
        }
    }
}
