//! What a process driver needs to hand the `anvil` MCP server (`anvil-bench mcp serve`,
//! [`crate::mcp`]) to an agent: the server's name and its tools' names, the server as it is
//! started ([`server`]), the MCP configuration naming it (Claude Code's `--mcp-config`;
//! Codex takes the same server as `-c mcp_servers.anvil.*`), and the note appended to the
//! brief.
//!
//! Invariant: every MCP name is defined here once — the server serves these names and the
//! briefs and allowlists name these — and the configured server is the engine binary as the
//! agent sees it (inside a bubblewrap sandbox, the engine's mount and the rail relay's
//! socket), serving exactly this run.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::process_agent::ExecutionPolicy;
use crate::case::Run;
use crate::sandbox::Backend;
use crate::sandbox::bubblewrap::{INSIDE_BIN, INSIDE_SOCKETS};
use crate::sandbox::relay::{RAIL_SOCKET_ENV, RAIL_SOCKET_NAME};

/// The MCP server name the drivers configure: tools appear to Claude Code as
/// `mcp__anvil__<tool>`.
pub const SERVER_NAME: &str = "anvil";

/// The rail tools' MCP names, in the order an investigation uses them.
pub(crate) mod tool {
    pub const ADD_EVIDENCE: &str = "add_evidence";
    pub const ADD_EXTERNAL_EVIDENCE: &str = "add_external_evidence";
    pub const ADD_CLAIM: &str = "add_claim";
    pub const FREEZE_RESEARCH: &str = "freeze_research";
    pub const VALIDATE: &str = "validate";
    pub const FINALIZE: &str = "finalize";
    pub const SHOW: &str = "show";
}

/// The MCP name of a router operation: `source.find_text` → `source_find_text`.
pub(crate) fn router_tool_name(operation: &str) -> String {
    operation.replace('.', "_")
}

/// Claude Code's name for a tool of this server: `mcp__anvil__<tool>` (`*` for all of them).
pub(crate) fn claude_tool_name(tool: &str) -> String {
    format!("mcp__{SERVER_NAME}__{tool}")
}

/// The rails as a brief lists them, each tool's name spelt by `name`.
fn rail_list(name: impl Fn(&str) -> String) -> String {
    format!(
        "{} {{path, startLine, endLine}}, {}, {} {{predicate, value, artifactIds, confidence}}, \
         {}, {}, {} {{status?, reason?}} and {}; every one that writes takes an \
         `idempotencyKey` (any short unique string).",
        name(tool::ADD_EVIDENCE),
        name(tool::ADD_EXTERNAL_EVIDENCE),
        name(tool::ADD_CLAIM),
        name(tool::FREEZE_RESEARCH),
        name(tool::VALIDATE),
        name(tool::FINALIZE),
        name(tool::SHOW),
    )
}

/// Appended to CASE.md when the rails are MCP tools: the shell rails above become tools.
pub(crate) fn mcp_brief() -> String {
    let name = |t: &str| format!("`{}`", claude_tool_name(t));
    format!(
        "\n## Rails as tools\n\nThere is no shell here. The rails above are the MCP tools {} \
         Search and read the repository with Read, Grep and Glob (or the {} tools where \
         offered), and write output/proposal.json with Write.\n",
        rail_list(name),
        name(&router_tool_name("source.*")),
    )
}

/// Appended to CASE.md for Codex when the rails are MCP tools: Codex keeps its shell (it
/// writes output/proposal.json with it), so the rails are named as tools beside it.
pub(crate) fn codex_mcp_brief() -> String {
    let name = |t: &str| format!("`{t}`");
    format!(
        "\n## Rails as tools\n\nThe rails above are also the tools of the `{SERVER_NAME}` MCP \
         server: {} Search and read the repository with its {} and {} tools or your shell, and \
         write output/proposal.json with your shell.\n",
        rail_list(name),
        name(&router_tool_name("source.find_text")),
        name(&router_tool_name("source.read_context")),
    )
}

/// The `anvil` server as an agent starts it for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// The server serving `run` for an agent driven under `policy`: inside a bubblewrap
/// sandbox the engine's mount, reaching the rails through the relay's socket.
#[must_use]
pub fn server(run: &Run, policy: &ExecutionPolicy) -> Server {
    // Bubblewrap mounts the run at its real path; natively any absolute path will do.
    let run_dir: PathBuf = std::fs::canonicalize(&run.dir)
        .or_else(|_| std::path::absolute(&run.dir))
        .unwrap_or_else(|_| run.dir.clone());
    let (command, env) = match policy.backend {
        Backend::Bubblewrap => (
            INSIDE_BIN.to_string(),
            vec![(
                RAIL_SOCKET_ENV.to_string(),
                Path::new(INSIDE_SOCKETS)
                    .join(RAIL_SOCKET_NAME)
                    .display()
                    .to_string(),
            )],
        ),
        Backend::Native { .. } => (policy.engine.display().to_string(), vec![]),
    };
    Server {
        command,
        args: vec![
            "mcp".into(),
            "serve".into(),
            "--run".into(),
            run_dir.display().to_string(),
        ],
        env,
    }
}

/// The `--mcp-config` document for a run driven under `policy`.
#[must_use]
pub fn mcp_config(run: &Run, policy: &ExecutionPolicy) -> String {
    let s = server(run, policy);
    let env: serde_json::Map<String, serde_json::Value> =
        s.env.into_iter().map(|(k, v)| (k, json!(v))).collect();
    let doc = json!({
        "mcpServers": {
            SERVER_NAME: {
                "type": "stdio",
                "command": s.command,
                "args": s.args,
                "env": env,
            }
        }
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_briefs_name_the_tools_as_they_always_have() {
        assert_eq!(
            mcp_brief(),
            "\n## Rails as tools\n\n\
There is no shell here. The rails above are the MCP tools `mcp__anvil__add_evidence` \
{path, startLine, endLine}, `mcp__anvil__add_external_evidence`, `mcp__anvil__add_claim` \
{predicate, value, artifactIds, confidence}, `mcp__anvil__freeze_research`, \
`mcp__anvil__validate`, `mcp__anvil__finalize` {status?, reason?} and `mcp__anvil__show`; \
every one that writes takes an `idempotencyKey` (any short unique string). Search and read \
the repository with Read, Grep and Glob (or the `mcp__anvil__source_*` tools where offered), \
and write output/proposal.json with Write.\n"
        );
        assert_eq!(
            codex_mcp_brief(),
            "\n## Rails as tools\n\n\
The rails above are also the tools of the `anvil` MCP server: `add_evidence` \
{path, startLine, endLine}, `add_external_evidence`, `add_claim` \
{predicate, value, artifactIds, confidence}, `freeze_research`, `validate`, `finalize` \
{status?, reason?} and `show`; every one that writes takes an `idempotencyKey` (any short \
unique string). Search and read the repository with its `source_find_text` and \
`source_read_context` tools or your shell, and write output/proposal.json with your shell.\n"
        );
        assert_eq!(claude_tool_name("*"), "mcp__anvil__*");
    }
}
