//! A move of the heuristic investigation as the client sees it: the tool call that asks for
//! it ([`Action`]), and the readers of a tool's result that every tool set shares.
//!
//! Invariant: nothing here knows which tools the client offers; [`super::client_tools`]
//! and [`super::mcp_tools`] build on it, never the other way round.

use serde_json::Value;

use super::conversation::ToolResult;

/// One tool call the plan asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub name: String,
    pub input: Value,
}

/// The first meaningful line of a tool's text, at most 300 characters.
pub fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("Exit code"))
        .unwrap_or("no output");
    line.chars().take(300).collect()
}

/// The first token starting with `prefix` in a successful result.
pub fn id_in(r: &ToolResult, prefix: &str) -> Option<String> {
    if r.is_error {
        return None;
    }
    r.text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .find(|t| t.starts_with(prefix) && t.len() > prefix.len())
        .map(str::to_string)
}
