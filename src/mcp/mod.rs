//! `anvil-bench mcp serve --run RUN`: the case rails (and the read-only investigation
//! router) as MCP tools over stdio, so an agent can run a whole case with no shell.
//!
//! * [`args`] — one strict argument type per rail tool: its schema and its parser.
//! * [`rail_backend`] — where a rail call runs: in process, or relayed out of a sandbox.
//! * [`router`] — the read-only investigation router's operations as tools.
//! * [`lines`] — the client's lines, read with a cap and checked to be JSON.
//! * [`session`] — the client's requests: ids in flight, and tool calls in arrival order.
//!
//! Invariant: a tool call either returns the rail's result or an MCP tool error
//! (`isError`) whose text starts with the refusal's stable kind (`CaseError::kind()`):
//! malformed arguments, a refused rail and an unreachable relay all come back that way,
//! and nothing a caller sends can panic the server or write outside what the rail writes.
//!
//! How a driver hands this server to an agent (its name, its tools' names, the briefs, the
//! `--mcp-config`) is the driver's: [`crate::driver::mcp_wiring`]. This module serves what
//! that configures and imports those names from there.

pub mod args;
pub mod lines;
pub mod rail_backend;
pub mod router;
pub mod session;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use self::args::{RAIL_TOOLS, RailCall};
use self::rail_backend::{RailBackend, Refusal};
use self::session::Session;
use crate::case::{CaseError, RunHandle};
use crate::limits::{Limit, LimitError};

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error(transparent)]
    Case(#[from] CaseError),
    /// The runtime, the protocol handshake or the serving task failed.
    #[error("cannot start the MCP server: {0}")]
    Start(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error(transparent)]
    Limit(#[from] LimitError),
}

impl McpError {
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            McpError::Case(e) => e.kind(),
            McpError::Start(_) => "mcp_start",
            McpError::Limit(_) => "bad_limit",
        }
    }
}

/// The server over one run.
#[derive(Debug, Clone)]
pub struct AnvilServer {
    run: RunHandle,
    backend: RailBackend,
    session: Arc<Session>,
}

impl AnvilServer {
    /// A server over the open run, calling the rails through `backend`.
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when a relative run path cannot be made absolute (the working
    /// directory is unreadable).
    pub fn new(run: &RunHandle, backend: RailBackend) -> Result<AnvilServer, CaseError> {
        Ok(AnvilServer {
            run: run.absolute()?,
            backend,
            session: Arc::default(),
        })
    }

    /// Every tool this server offers.
    #[must_use]
    pub fn tools(&self) -> Vec<Tool> {
        let rails = RAIL_TOOLS.iter().map(|t| {
            let annotations = ToolAnnotations::new()
                .read_only(t.read_only)
                .destructive(false)
                .idempotent(true)
                .open_world(false);
            Tool::new(t.name, t.description, Arc::new((t.schema)())).annotate(annotations)
        });
        router::router_tools().into_iter().chain(rails).collect()
    }

    /// Runs one tool call to completion. `None` when no tool has that name.
    pub fn call(&self, name: &str, arguments: Value) -> Option<CallToolResult> {
        let outcome = match router::operation_of(name) {
            Some(op) => router::query(&self.backend, &self.run, op, &arguments),
            None => RailCall::parse(name, arguments)?
                .map_err(Refusal::from)
                .and_then(|call| self.backend.call(&self.run, &call)),
        };
        Some(match outcome {
            Ok(value) => CallToolResult::success(vec![ContentBlock::text(
                serde_json::to_string_pretty(&value).unwrap_or_default(),
            )]),
            Err(refusal) => refused(&refusal),
        })
    }
}

fn refused(refusal: &Refusal) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{}: {}",
        refusal.kind, refusal.message
    ))])
}

impl ServerHandler for AnvilServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "anvil-bench",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "The rails of one anvil-bench case run. Read the repository with the read-only \
                 tools, freeze what you rely on with add_evidence, assert claims with add_claim, \
                 freeze_research, write output/proposal.json, validate, finalize. Every mutating \
                 tool takes an idempotencyKey; a refusal's text starts with its kind.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp runs each request in a task of its own: without the turn, calls sent together
        // would reach the run's lock in any order.
        let _turn = Arc::clone(&self.session).turn(&context.id).await;
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let server = self.clone();
        let tool = name.clone();
        // The rails are blocking file I/O under a lock: keep them off the protocol threads.
        let result = tokio::task::spawn_blocking(move || server.call(&tool, arguments))
            .await
            .unwrap_or_else(|e| {
                Some(refused(&Refusal {
                    kind: "internal".into(),
                    message: format!("the tool call failed: {e}"),
                }))
            });
        match result {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            )),
        }
    }
}

/// Serves `run` on stdin/stdout until the client closes stdin.
///
/// Every line the client sends is checked before the protocol sees it: a line that is not
/// JSON gets a JSON-RPC parse error (code -32700, id null), one over
/// [`Limit::McpLineBytes`], nested too deep or repeating a key an invalid-request error
/// saying so (see [`lines`]), a request whose id is in flight an invalid-request error
/// naming the id (see [`session`]), and the server keeps serving, instead of dropping it
/// silently. The session's tool calls run one at a time in the order they were read. One
/// task owns stdout and writes whole lines, so a refusal never interleaves with a response.
///
/// # Errors
///
/// `McpError::Limit` when `ANVIL_MAX_MCP_LINE_BYTES` is set but not a valid cap;
/// `McpError::Case` when the run's path cannot be made absolute; `McpError::Start` when the runtime cannot
/// be built, the protocol handshake fails or the serving task ends in error. What a client
/// sends never ends the session with an error.
pub fn serve_stdio(run: &RunHandle) -> Result<(), McpError> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let line_cap = Limit::McpLineBytes.value()?;
    let server = AnvilServer::new(run, RailBackend::from_env())?;
    let session = Arc::clone(&server.session);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| McpError::Start(e.into()))?;
    runtime.block_on(async move {
        let (to_server, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, from_server) = tokio::io::duplex(1 << 20);
        let (lines_tx, mut lines_rx) = tokio::sync::mpsc::unbounded_channel::<String>();

        // stdin → the server, refusals (not JSON, over the cap, an id in flight…) → stdout.
        let errors = lines_tx.clone();
        let admitted = Arc::clone(&session);
        tokio::spawn(async move {
            let mut to_server = to_server;
            let mut stdin = BufReader::new(tokio::io::stdin());
            while let Ok(Some(line)) = lines::next_line(&mut stdin, line_cap).await {
                if let Some(reply) = lines::refusal(&line, line_cap) {
                    let _ = errors.send(reply.to_string());
                    continue;
                }
                let lines::Line::Json(text) = line else {
                    continue;
                };
                // Admitted here, in the order the lines were read: a tool call's turn is
                // taken before the protocol spawns anything for it.
                if let Err(reply) = admitted.admit(&text) {
                    let _ = errors.send(reply.to_string());
                    continue;
                }
                if to_server
                    .write_all(format!("{text}\n").as_bytes())
                    .await
                    .is_err()
                {
                    break;
                }
            }
            // Dropping `to_server` closes the server's input: it ends as on EOF.
        });
        // The server's output, line by line, → stdout.
        tokio::spawn(async move {
            let mut out = BufReader::new(from_server).lines();
            while let Ok(Some(line)) = out.next_line().await {
                session.answered(&line);
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let writer = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(line) = lines_rx.recv().await {
                if stdout
                    .write_all(format!("{line}\n").as_bytes())
                    .await
                    .is_err()
                    || stdout.flush().await.is_err()
                {
                    break;
                }
            }
        });

        let service = server
            .serve((server_in, server_out))
            .await
            .map_err(|e| McpError::Start(e.into()))?;
        service
            .waiting()
            .await
            .map_err(|e| McpError::Start(e.into()))?;
        let _ = writer.await;
        Ok(())
    })
}
