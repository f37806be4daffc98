//! `case investigate`: run a driver on a run and report what the agent left.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::cli::exit::{self, ToExitCode};
use crate::driver::investigate::{InvestigateError, InvestigateReport};
use crate::driver::scripted::{ScriptDoc, ScriptedAgentDriver};
use crate::driver::{
    AgentDriver, ClaudeCodeDriver, ClaudeTools, CodexDriver, CommandDriver, ExecutionPolicy,
};
use crate::process::CancelHandle;
use crate::sandbox::Backend;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DriverName {
    /// In-process: plays a script of rail steps (--script); no process, no model.
    Scripted,
    /// Any executable (--command PROG ARGS...).
    Command,
    /// Claude Code (`claude`), in stream-json mode.
    ClaudeCode,
    /// Codex (`codex exec --json`); given a model provider of its own when OPENAI_BASE_URL
    /// is set (`--model replay` against replay-model).
    Codex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolsChoice {
    Mcp,
    Bash,
}

#[derive(Debug, Args)]
pub struct InvestigateArgs {
    /// The run directory.
    pub run: PathBuf,
    /// Who investigates.
    #[arg(long, value_enum)]
    pub driver: DriverName,
    /// For --driver scripted: an `anvil-script` v1 file of rail steps.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// For --driver command: the program and its arguments (put last).
    #[arg(long, value_name = "PROG", num_args = 1.., allow_hyphen_values = true)]
    pub command: Vec<String>,
    /// Where the agent runs: bubblewrap (contained) or native (needs --allow-degraded-native).
    #[arg(long, default_value = "bubblewrap", value_name = "BACKEND")]
    pub backend: String,
    /// For --driver claude-code: the rails as MCP tools with no shell (mcp), or as
    /// `anvil-bench case …` through a Bash tool restricted to them (bash). For --driver
    /// codex: the rails as MCP tools beside its shell (mcp), or its shell alone (bash).
    #[arg(long, value_enum, default_value = "mcp", value_name = "TOOLS")]
    pub tools: ToolsChoice,
    /// Acknowledge that native execution cannot enforce read-only repository and case-only writes.
    #[arg(long)]
    pub allow_degraded_native: bool,
    /// Hard wall-clock limit, at least 1; the whole process group is killed when it passes.
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Passed to the agent where it supports it; at least 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
    /// Passed to the agent where it supports it.
    #[arg(long, value_name = "X")]
    pub max_budget_usd: Option<f64>,
    /// The model to ask for.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// A path the agent must never reach (e.g. the evaluator's labels); repeatable.
    #[arg(long = "hide", value_name = "PATH")]
    pub hidden: Vec<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

fn fail(e: &InvestigateError, json: bool) -> u8 {
    match e {
        InvestigateError::Case(c) => super::fail(c, json),
        other => {
            eprintln!("error: {other}");
            if json {
                super::print_json(
                    &serde_json::json!({"error": {"kind": other.kind(), "message": other.to_string(), "exitCode": other.exit_code()}}),
                );
            }
            other.exit_code()
        }
    }
}

/// Why the flags cannot become an investigation.
enum Refusal {
    Usage(&'static str),
    Sandbox(crate::sandbox::SandboxError),
    Script(crate::case::CaseError),
}

/// The driver and the execution policy the flags describe, checked once before anything
/// runs.
fn resolve(a: &InvestigateArgs) -> Result<(Box<dyn AgentDriver>, ExecutionPolicy), Refusal> {
    let backend =
        Backend::from_flags(&a.backend, a.allow_degraded_native).map_err(Refusal::Sandbox)?;
    let tools = match a.tools {
        ToolsChoice::Mcp => ClaudeTools::Mcp,
        ToolsChoice::Bash => ClaudeTools::Bash,
    };
    let agent: Box<dyn AgentDriver> = match a.driver {
        DriverName::Scripted => {
            let path = a
                .script
                .as_ref()
                .ok_or(Refusal::Usage("--driver scripted needs --script FILE"))?;
            let doc = ScriptDoc::load(path).map_err(Refusal::Script)?;
            let name = path.display().to_string();
            Box::new(ScriptedAgentDriver::new(&name, move |agent| {
                doc.play(agent)
            }))
        }
        DriverName::Command => {
            let (program, args) = a.command.split_first().ok_or(Refusal::Usage(
                "--driver command needs --command PROG [ARGS...]",
            ))?;
            Box::new(CommandDriver {
                program: program.clone(),
                args: args.to_vec(),
            })
        }
        DriverName::ClaudeCode => Box::new(ClaudeCodeDriver { tools }),
        DriverName::Codex => Box::new(CodexDriver { tools }),
    };
    let policy = ExecutionPolicy {
        backend,
        timeout: Duration::from_secs(a.timeout),
        max_turns: a.max_turns,
        max_budget_usd: a.max_budget_usd,
        model: a.model.clone(),
        hidden: a.hidden.clone(),
        ambient: crate::driver::env::ambient(),
        engine: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("anvil-bench")),
    };
    Ok((agent, policy))
}

pub fn run(a: &InvestigateArgs) -> u8 {
    // Parse, then resolve: every flag combination is refused here or not at all.
    let (agent, policy) = match resolve(a) {
        Ok(resolved) => resolved,
        Err(Refusal::Sandbox(e)) => return fail(&InvestigateError::Sandbox(e), a.json),
        Err(Refusal::Script(e)) => return super::fail(&e, a.json),
        Err(Refusal::Usage(msg)) => {
            eprintln!("error: {msg}");
            return exit::USAGE;
        }
    };
    // Opened by its absolute path, as the agent (whose working directory it becomes) is
    // handed every path.
    let run = match super::open_absolute(&a.run) {
        Ok(run) => run,
        Err(e) => return fail(&InvestigateError::Case(e), a.json),
    };
    let spinner = if a.json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new_spinner()
    };
    spinner.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    spinner.enable_steady_tick(Duration::from_millis(200));
    let name = agent.name();
    let mut on_progress = |p: crate::driver::investigate::Progress| {
        let turns = p
            .usage
            .num_turns
            .map(|n| format!(" · {n} turns"))
            .unwrap_or_default();
        let tokens = p
            .usage
            .total_tokens()
            .map(|n| format!(" · {n} tokens"))
            .unwrap_or_default();
        spinner.set_message(format!("{name}{turns}{tokens}"));
    };
    let result = agent.drive(&run, &policy, &CancelHandle::new(), &mut on_progress);
    spinner.finish_and_clear();
    match result {
        Ok(report) => {
            let exit_code = report.exit_code();
            if a.json {
                super::print_json(&ReportDoc {
                    report: &report,
                    exit_code,
                });
            } else {
                print_report(&report);
            }
            exit_code
        }
        Err(e) => fail(&e, a.json),
    }
}

/// The report as `--json` prints it: the library's report, then the exit code the CLI
/// leaves with.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportDoc<'a> {
    #[serde(flatten)]
    report: &'a InvestigateReport,
    exit_code: u8,
}

fn print_report(r: &InvestigateReport) {
    println!("{} on {} ({}): {:?}", r.driver, r.run, r.backend, r.outcome);
    if let Some(f) = &r.failure {
        println!("failure: {f}");
    }
    println!(
        "state: {} · status: {}",
        r.state,
        r.status
            .as_ref()
            .map(std::string::ToString::to_string)
            .unwrap_or_else(|| "(none)".into())
    );
    let u = &r.usage;
    println!(
        "usage: {} in / {} out tokens · {} turns · cost {}",
        u.input_tokens.map_or("?".into(), |n| n.to_string()),
        u.output_tokens.map_or("?".into(), |n| n.to_string()),
        u.num_turns.map_or("?".into(), |n| n.to_string()),
        u.total_cost_usd.map_or("?".into(), |c| format!("${c:.4}")),
    );
    let unenforced: Vec<String> = r
        .attestation
        .iter()
        .flat_map(|a| a.unenforced.iter().map(|g| g.id().to_string()))
        .collect();
    if r.attestation.is_none() {
        println!("in-process: no agent process ran, so nothing was contained");
    }
    if !unenforced.is_empty() {
        println!("not enforced: {}", unenforced.join(", "));
    }
    if let Some(v) = &r.violation {
        println!(
            "CONTAINMENT VIOLATION: the repository changed: {}",
            v.changed.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::lifecycle::State;
    use crate::process::Outcome;

    #[test]
    fn the_json_report_ends_with_the_exit_code_the_cli_leaves_with() {
        let report = InvestigateReport {
            format: "anvil-investigation",
            format_version: 1,
            run: "r".into(),
            driver: "scripted:s".into(),
            backend: "in_process".into(),
            outcome: Outcome::Failed,
            failure: Some("the script failed".into()),
            state: State::Open,
            status: None,
            usage: Default::default(),
            process_ms: None,
            attestation: None,
            violation: None,
        };
        let text = serde_json::to_string(&ReportDoc {
            report: &report,
            exit_code: report.exit_code(),
        })
        .unwrap();
        assert!(
            text.starts_with(r#"{"format":"anvil-investigation","formatVersion":1,"run":"r""#),
            "{text}"
        );
        assert!(
            text.ends_with(r#""attestation":null,"violation":null,"exitCode":5}"#),
            "{text}"
        );
    }
}
