//! Operational limits of the investigation tools (defaults from investigation-tools-v1).
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
