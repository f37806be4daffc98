//! What a process agent is, below every driver that runs one: the policy it runs under
//! ([`ExecutionPolicy`]), the command it asks for ([`AgentCommand`]), how it reaches the
//! rails ([`ClaudeTools`]), how its own accounting is read ([`Accounting`]), and its brief.
//!
//! Invariant: these are descriptions only. Nothing here spawns, contains or reads a run's
//! documents beyond CASE.md; [`super::investigate`] runs what a [`ProcessAgent`] describes,
//! and the drivers ([`super::agent`], [`super::codex`]) only describe.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::transcript::{self, Event};
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
    /// The model API the agent speaks, and so the endpoint a sandbox must let it reach.
    fn model_api(&self) -> ModelApi {
        ModelApi::Anthropic
    }
}

/// A model vendor's API: the variable that points an agent at it, and its public host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelApi {
    /// The Anthropic Messages API (Claude Code; a command driver by default).
    Anthropic,
    /// The OpenAI Responses API (Codex).
    OpenAi,
}

impl ModelApi {
    /// The variable naming the endpoint, and the vendor's URL when it is unset.
    #[must_use]
    pub fn base_url(self) -> (&'static str, &'static str) {
        match self {
            ModelApi::Anthropic => ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
            ModelApi::OpenAi => ("OPENAI_BASE_URL", "https://api.openai.com"),
        }
    }
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
    #[must_use]
    pub fn events(self, line: &str) -> Vec<Event> {
        match self {
            Accounting::ClaudeStreamJson => transcript::claude_events(line),
            Accounting::CodexJsonl(_) => transcript::codex_events(line),
            Accounting::None => vec![],
        }
    }
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

impl ClaudeTools {
    /// The `--tools` value that selects it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ClaudeTools::Mcp => "mcp",
            ClaudeTools::Bash => "bash",
        }
    }
}

/// The brief the agent is given: CASE.md of the run, verbatim.
#[must_use]
pub fn brief(run: &Run) -> String {
    std::fs::read_to_string(run.dir.join(crate::case::views::CASE_MD)).unwrap_or_default()
}
