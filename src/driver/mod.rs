//! Drivers: the seam where an agent is invoked, and the process machinery under it.
//!
//! * [`runner`] — the `AgentProcessRunner`: spawns one agent process, streams its output line
//!   by line to a callback and the execution log as it arrives, enforces a hard wall-clock
//!   timeout and cancellation by killing the whole process group, and records an execution
//!   record with start/end timestamps.
//! * [`scripted`] — the in-process scripted driver: a closure over the same rails an agent
//!   calls, so conformance trials run whole cases with no process and no LLM.
//! * [`agent`] — the `AgentDriver` seam and the process drivers (command, Claude Code);
//!   [`codex`] — the Codex driver: its model provider, MCP server and sandbox flags.
//! * [`env`] — the child's environment: an allowlist over the ambient environment plus
//!   overrides.
//!
//! Invariant: an agent process never outlives its run and never sees the ambient environment
//! wholesale. Process drivers configure the runner; none of them spawns a child itself.

pub mod agent;
pub mod codex;
pub mod env;
pub mod investigate;
pub mod runner;
pub mod scripted;
pub mod transcript;
pub mod usage;
