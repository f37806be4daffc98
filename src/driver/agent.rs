//! The `AgentDriver` seam and the process drivers that describe a command for it (any
//! command, Claude Code); Codex's is [`super::codex`].
//!
//! Invariant: a process driver only says what to run (program, arguments, the environment
//! variables it may see) and how to read the agent's own accounting from its output; the
//! process runner spawns, streams, times and kills; the sandbox contains. No driver parses a
//! proposal or touches the run's documents.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::investigate::{InvestigateError, InvestigateReport, Progress, investigate};
use super::mcp_wiring;
use super::process_agent::{
    Accounting, AgentCommand, ClaudeTools, ExecutionPolicy, ProcessAgent, brief,
};
use crate::case::{Run, RunHandle};
use crate::process::CancelHandle;

/// The one seam where an agent is invoked: given a run and an execution policy, drive the
/// agent and return what happened.
pub trait AgentDriver {
    fn name(&self) -> String;

    /// Drives the agent on the open run under `policy`, reporting each line of its
    /// output to `progress`, until it ends or `cancel` fires.
    ///
    /// # Errors
    ///
    /// An [`InvestigateError`] when the run cannot be investigated or its record cannot be
    /// written: it does not open or is not open, or the backend refuses or fails (see
    /// [`investigate`]). How the agent itself ended (failed, timed out, cancelled) is the
    /// report's, not an error.
    fn drive(
        &self,
        run: &RunHandle,
        policy: &ExecutionPolicy,
        cancel: &CancelHandle,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<InvestigateReport, InvestigateError>;
}

/// Every process agent is driven the same way: configured runner, backend, accounting.
impl<T: ProcessAgent> AgentDriver for T {
    fn name(&self) -> String {
        ProcessAgent::name(self)
    }

    fn drive(
        &self,
        run: &RunHandle,
        policy: &ExecutionPolicy,
        cancel: &CancelHandle,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<InvestigateReport, InvestigateError> {
        investigate(run, self, policy, cancel, progress)
    }
}

/// Any executable, given the run directory as its working directory and CASE.md on
/// `ANVIL_CASE_MD`'s path.
#[derive(Debug, Clone)]
pub struct CommandDriver {
    pub program: String,
    pub args: Vec<String>,
}

impl ProcessAgent for CommandDriver {
    fn name(&self) -> String {
        format!("command:{}", self.program)
    }

    fn command(&self, run: &Run, _policy: &ExecutionPolicy) -> AgentCommand {
        let mut set = BTreeMap::new();
        set.insert("ANVIL_RUN".into(), run.dir.display().to_string());
        set.insert(
            "ANVIL_CASE_MD".into(),
            run.dir
                .join(crate::case::views::CASE_MD)
                .display()
                .to_string(),
        );
        AgentCommand {
            program: self.program.clone(),
            args: self.args.clone(),
            allow: vec![],
            set,
            install_hint: None,
            files: vec![],
        }
    }

    fn accounting(&self, _policy: &ExecutionPolicy) -> Accounting {
        Accounting::None
    }
}

/// Claude Code, as `claude -p <CASE.md> --output-format stream-json --verbose`, allowed to
/// read and search and to call the rails, and nothing else.
#[derive(Debug, Clone, Default)]
pub struct ClaudeCodeDriver {
    pub tools: ClaudeTools,
}

/// With [`ClaudeTools::Mcp`]: the built-in tools that exist at all, and the allowlist.
pub const CLAUDE_MCP_BUILTIN_TOOLS: &str = "Read,Grep,Glob,Write";
/// Besides every tool of the `anvil` server (`mcp__anvil__*`, first on the list).
pub const CLAUDE_MCP_ALLOWED_BUILTINS: &[&str] = &["Read", "Grep", "Glob"];
/// The MCP configuration file, in the run's workspace/.
pub const CLAUDE_MCP_CONFIG: &str = "workspace/anvil-mcp.json";

/// The tools Claude Code may use: read and search, the rails, writing output/ files.
pub const CLAUDE_ALLOWED_TOOLS: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "Write",
    "Bash(anvil-bench:*)",
    "Bash(grep:*)",
];

impl ProcessAgent for ClaudeCodeDriver {
    fn name(&self) -> String {
        "claude-code".into()
    }

    fn command(&self, run: &Run, policy: &ExecutionPolicy) -> AgentCommand {
        let mut files = Vec::new();
        let mut prompt = brief(run);
        if self.tools == ClaudeTools::Mcp {
            prompt.push_str(&mcp_wiring::mcp_brief());
            files.push((
                PathBuf::from(CLAUDE_MCP_CONFIG),
                mcp_wiring::mcp_config(run, policy),
            ));
        }
        let mut args = vec![
            "-p".to_string(),
            prompt,
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            // Root refuses --dangerously-skip-permissions; acceptEdits with an explicit tool
            // allowlist is the strict mode that works everywhere.
            "--permission-mode".into(),
            "acceptEdits".into(),
            "--add-dir".into(),
            run.doc.inputs.repository.clone(),
        ];
        if let Some(n) = policy.max_turns {
            args.extend(["--max-turns".into(), n.to_string()]);
        }
        if let Some(usd) = policy.max_budget_usd {
            args.extend(["--max-budget-usd".into(), usd.to_string()]);
        }
        if let Some(model) = &policy.model {
            args.extend(["--model".into(), model.clone()]);
        }
        let allowed: Vec<String> = match self.tools {
            ClaudeTools::Mcp => {
                let config = run.dir.join(CLAUDE_MCP_CONFIG).display().to_string();
                args.extend(["--mcp-config".into(), config, "--strict-mcp-config".into()]);
                args.extend(["--tools".into(), CLAUDE_MCP_BUILTIN_TOOLS.into()]);
                std::iter::once(mcp_wiring::claude_tool_name("*"))
                    .chain(CLAUDE_MCP_ALLOWED_BUILTINS.iter().map(ToString::to_string))
                    .collect()
            }
            ClaudeTools::Bash => CLAUDE_ALLOWED_TOOLS
                .iter()
                .map(ToString::to_string)
                .collect(),
        };
        // --allowedTools takes several values: it goes last.
        args.push("--allowedTools".into());
        args.extend(allowed);
        let set = [
            ("DISABLE_AUTOUPDATER", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        AgentCommand {
            program: "claude".into(),
            args,
            allow: vec!["ANTHROPIC_*".into()],
            set,
            install_hint: Some("npm i -g @anthropic-ai/claude-code".into()),
            files,
        }
    }

    fn accounting(&self, _policy: &ExecutionPolicy) -> Accounting {
        Accounting::ClaudeStreamJson
    }
}
