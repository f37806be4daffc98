//! Drivers: the seam where an agent is invoked, over the process runner ([`crate::process`])
//! and the sandbox ([`crate::sandbox`]) beneath it.
//!
//! * [`process_agent`] — what a process agent is: the execution policy, the command it asks
//!   for, how it reaches the rails, how its accounting is read, its brief.
//! * [`mcp_wiring`] — what a driver hands an agent to reach the `anvil` MCP server: its
//!   name, its tools' names, the briefs and the `--mcp-config`.
//! * [`investigate`] — `case investigate`: one process agent on one run, contained and
//!   recorded in `execution.json`.
//! * [`agent`] — the `AgentDriver` seam and the process drivers (command, Claude Code);
//!   [`codex`] — the Codex driver: its model provider, MCP server and sandbox flags.
//! * [`scripted`] — the in-process scripted driver: a closure over the same rails an agent
//!   calls, so conformance trials run whole cases with no process and no LLM.
//! * [`env`] — the child's environment: an allowlist over the ambient environment plus
//!   overrides. [`usage`], [`transcript`] — what an agent's own output says it spent and did.
//!
//! Invariant: an agent process never outlives its run and never sees the ambient environment
//! wholesale. Process drivers configure the runner; none of them spawns a child itself.
//! Imports point one way: `agent` → `investigate`, `codex` → `mcp_wiring` → `process_agent`.

pub mod agent;
pub mod codex;
pub mod env;
pub mod investigate;
pub mod mcp_wiring;
pub mod process_agent;
pub mod scripted;
pub mod transcript;
pub mod usage;

pub use agent::{AgentDriver, ClaudeCodeDriver, CommandDriver};
pub use codex::CodexDriver;
pub use process_agent::{
    Accounting, AgentCommand, ClaudeTools, ExecutionPolicy, ModelApi, ProcessAgent,
};
