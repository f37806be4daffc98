//! The `AgentDriver` seam and the process drivers that configure the runner.
//!
//! Invariant: a process driver only says what to run (program, arguments, the environment
//! variables it may see) and how to read the agent's own accounting from its output; the
//! runner spawns, streams, times and kills; the sandbox contains. No driver parses a
//! proposal or touches the run's documents.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::investigate::{InvestigateError, InvestigateReport, Progress, investigate};
use super::runner::CancelHandle;
use std::time::Duration;

use serde::Serialize;

pub use super::codex::CodexDriver;
use super::usage::{TokenPrice, Usage};
use crate::case::Run;
use crate::sandbox::Backend;

/// How an investigation may execute: where, for how long, with what budget.
#[derive(Debug, Clone)]
pub struct ExecutionPolicy {
    pub backend: Backend,
    pub timeout: Duration,
    pub max_turns: Option<u32>,
    pub max_budget_usd: Option<f64>,
    pub model: Option<String>,
    /// Paths the agent must never reach (the evaluator's labels).
    pub hidden: Vec<PathBuf>,
    /// The engine's environment, from which the allowlist picks.
    pub ambient: Vec<(String, String)>,
    /// The `anvil-bench` binary the agent calls the rails with (first on its PATH).
    pub engine: PathBuf,
}

/// What a process driver wants run.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Ambient variables the agent may see, besides the base allowlist (`ANTHROPIC_*`).
    pub allow: Vec<String>,
    /// Variables set for the agent, winning over ambient ones.
    pub set: BTreeMap<String, String>,
    pub install_hint: Option<String>,
    /// Files the agent's configuration needs, relative to the run directory, written by the
    /// engine before the agent starts.
    pub files: Vec<(PathBuf, String)>,
}

/// Which accounting format the agent prints.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Accounting {
    None,
    ClaudeStreamJson,
    /// Codex prints tokens but no cost: they are priced at this rate.
    CodexJsonl(TokenPrice),
}

/// A process-based agent.
pub trait ProcessAgent {
    /// `claude-code`, `codex`, `command:<program>`.
    fn name(&self) -> String;
    fn command(&self, run: &Run, policy: &ExecutionPolicy) -> AgentCommand;
    fn accounting(&self, policy: &ExecutionPolicy) -> Accounting;
}

impl Accounting {
    pub fn observe(self, usage: &mut Usage, line: &str) {
        match self {
            Accounting::None => {}
            Accounting::ClaudeStreamJson => usage.observe_claude(line),
            Accounting::CodexJsonl(price) => {
                usage.observe_codex(line);
                usage.total_cost_usd = usage.cost(&price);
            }
        }
    }

    /// The transcript events one output line carries, where the format is known.
    pub fn events(self, line: &str) -> Vec<super::transcript::Event> {
        match self {
            Accounting::ClaudeStreamJson => super::transcript::claude_events(line),
            Accounting::CodexJsonl(_) => super::transcript::codex_events(line),
            Accounting::None => vec![],
        }
    }
}

/// The one seam where an agent is invoked: given a run and an execution policy, drive the
/// agent and return what happened.
pub trait AgentDriver {
    fn name(&self) -> String;
    fn drive(
        &self,
        run_dir: &Path,
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
        run_dir: &Path,
        policy: &ExecutionPolicy,
        cancel: &CancelHandle,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<InvestigateReport, InvestigateError> {
        investigate(run_dir, self, policy, cancel, progress)
    }
}

/// The brief the agent is given: CASE.md of the run, verbatim.
pub fn brief(run: &Run) -> String {
    std::fs::read_to_string(run.dir.join(crate::case::views::CASE_MD)).unwrap_or_default()
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

/// How Claude Code (and Codex, beside its shell) reaches the rails.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ClaudeTools {
    /// The `anvil` MCP server (`anvil-bench mcp serve`): no shell at all.
    #[default]
    Mcp,
    /// `anvil-bench case …` through a Bash tool restricted to the rails and grep.
    Bash,
}

/// With [`ClaudeTools::Mcp`]: the built-in tools that exist at all, and the allowlist.
pub const CLAUDE_MCP_BUILTIN_TOOLS: &str = "Read,Grep,Glob,Write";
pub const CLAUDE_MCP_ALLOWED_TOOLS: &[&str] = &["mcp__anvil__*", "Read", "Grep", "Glob"];
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
            prompt.push_str(crate::mcp::driver::MCP_BRIEF);
            files.push((
                PathBuf::from(CLAUDE_MCP_CONFIG),
                crate::mcp::driver::mcp_config(run, policy),
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
        let allowed = match self.tools {
            ClaudeTools::Mcp => {
                let config = run.dir.join(CLAUDE_MCP_CONFIG).display().to_string();
                args.extend(["--mcp-config".into(), config, "--strict-mcp-config".into()]);
                args.extend(["--tools".into(), CLAUDE_MCP_BUILTIN_TOOLS.into()]);
                CLAUDE_MCP_ALLOWED_TOOLS
            }
            ClaudeTools::Bash => CLAUDE_ALLOWED_TOOLS,
        };
        // --allowedTools takes several values: it goes last.
        args.push("--allowedTools".into());
        args.extend(allowed.iter().map(|s| s.to_string()));
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
