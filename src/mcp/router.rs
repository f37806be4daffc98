//! The read-only investigation router's operations as MCP tools: `source.find_text`
//! becomes `source_find_text`, and a call is a one-request batch for this run.
//!
//! Invariant: a router tool reads and never writes the run or the repository, except the
//! journal line `case query` appends; its schema is the router's own argument schema, and
//! a refused batch comes back as a tool error starting with the router's error kind.

use rmcp::model::Tool;
use rmcp::model::ToolAnnotations;
use serde_json::{Value, json};

use super::rail_backend::{RailBackend, Refusal, relay_json, workspace_file};
use crate::case::RunHandle;
use crate::driver::mcp_wiring::router_tool_name;
use crate::tools::{self, REQUEST_FORMAT, REQUEST_FORMAT_VERSION};

/// The router's operations as tools.
#[must_use]
pub fn router_tools() -> Vec<Tool> {
    tools::operations()
        .into_iter()
        .map(|op| {
            let schema = match op.arguments_schema {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let annotations = ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false);
            Tool::new(
                router_tool_name(op.name),
                op.description,
                std::sync::Arc::new(schema),
            )
            .annotate(annotations)
        })
        .collect()
}

/// The operation a tool name stands for, if any.
#[must_use]
pub fn operation_of(tool: &str) -> Option<&'static str> {
    tools::OPERATIONS
        .iter()
        .copied()
        .find(|op| router_tool_name(op) == tool)
}

/// Answers one operation as a one-request batch for the run `run_id` at `run`.
///
/// # Errors
///
/// A [`Refusal`] carrying the stable kind: the router's own error kind when the batch is
/// refused (`invalid_arguments`, `limit_exceeded`, `run_not_queryable`, a source that
/// cannot be read…), `internal` when the result does not render. Relayed: `io` when the
/// request file cannot be written under `workspace/.mcp/`, `relay_unreachable`, the
/// relayed CLI's error kind, or `relay_failed` when it answered no JSON or failed without
/// an error document.
pub fn query(
    backend: &RailBackend,
    run: &RunHandle,
    operation: &str,
    arguments: &Value,
) -> Result<Value, Refusal> {
    let request = json!({
        "format": REQUEST_FORMAT,
        "formatVersion": REQUEST_FORMAT_VERSION,
        "runId": run.doc().identity.run_id.to_string(),
        "requests": [{"requestId": "Q1", "operation": operation, "arguments": arguments}],
    });
    match backend {
        RailBackend::Direct => {
            let doc = tools::query_journaled(run, &request).map_err(|e| Refusal {
                kind: e.kind().to_string(),
                message: e.to_string(),
            })?;
            serde_json::to_value(doc).map_err(|e| Refusal {
                kind: "internal".into(),
                message: format!("cannot render the result: {e}"),
            })
        }
        // Inside a sandbox the AIR (needed to check staleness) and the journal are out of
        // reach: the engine answers `case query` through the relay instead.
        RailBackend::Relay { socket, cwd } => {
            let bytes = serde_json::to_vec(&request).unwrap_or_default();
            let workspace = run.dir().join(crate::case::run::WORKSPACE_DIR);
            let file = workspace_file(&workspace, "query", "json", &bytes)?;
            let args: Vec<String> = [
                "case",
                "query",
                &run.dir().display().to_string(),
                "--request",
                &file.display().to_string(),
                "--json",
            ]
            .iter()
            .map(ToString::to_string)
            .collect();
            relay_json(socket, cwd, &args)
        }
    }
}
