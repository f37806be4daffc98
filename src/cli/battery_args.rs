//! `battery`'s flags, and their resolution into a [`Config`] the runner takes.
//!
//! Parse, then resolve: clap parses [`BatteryArgs`]; [`resolve`] checks every flag
//! combination once (corpus, investigator and backend, the agent program, the model
//! endpoint, the output directory) and either refuses with what to pass or install, or
//! produces the whole configuration. Nothing is written before it succeeds.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use crate::battery::arm::Arm;
use crate::battery::endpoint::Endpoint;
use crate::battery::plan::{Partition, Selector};
use crate::battery::runner::Config;
use crate::battery::trial::{DriverConfig, Script};
use crate::driver::ClaudeTools;
use crate::sandbox::Backend;

/// The bundled corpus, where this binary was built from.
pub(super) const BUNDLED_SCENARIOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
pub(super) const BUNDLED_LABELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/labels-private");

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InvestigatorName {
    Heuristic,
    Oracle,
    /// The over-claiming adversary (measures the engine's gate).
    Overclaim,
    Scripted,
    ClaudeCode,
    Codex,
    Command,
}

impl InvestigatorName {
    pub(super) fn arm(self) -> Arm {
        match self {
            InvestigatorName::Heuristic => Arm::Heuristic,
            InvestigatorName::Oracle => Arm::Oracle,
            InvestigatorName::Overclaim => Arm::Overclaim,
            InvestigatorName::Scripted => Arm::Scripted,
            InvestigatorName::ClaudeCode => Arm::ClaudeCode,
            InvestigatorName::Codex => Arm::Codex,
            InvestigatorName::Command => Arm::Command,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ToolsName {
    Mcp,
    Bash,
}

#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_long_help = "\
With no flags: the bundled corpus, the deterministic baseline against the in-process heuristic \
investigator, the oracle (positive control) and both cheaters (negative control); no network, \
no model. Every trial is a real case through the rails (open, investigate, finalize, close to \
a scratch AIR); labels are read only after a trial's case has ended.\n\n\
Results go to --out (default reports/<UTC stamp>-<investigator>/): results.json (see --schema), \
trials/ (one record per finished trial, written as it ends) and runs/ (every case run). An \
interrupted battery continues with --resume DIR.\n\n\
Exit codes: 0 the battery completed (whatever the scores); 1 a control failed, a deterministic \
arm disagreed with itself, or the label set changed; 2 usage; 5 more infrastructure failures \
than --max-infra-failures; 130 interrupted (the finished trials are kept)."
)]
pub struct BatteryArgs {
    #[command(subcommand)]
    pub action: Option<BatteryCommand>,
    /// A scenario corpus (`<class>/<name>/scenario.json`); needs --labels. Default: the
    /// bundled corpus.
    #[arg(long, value_name = "DIR", requires = "labels")]
    pub scenarios: Option<PathBuf>,
    /// The labels of that corpus (`<class>/<name>.json`); needs --scenarios.
    #[arg(long, value_name = "DIR", requires = "scenarios")]
    pub labels: Option<PathBuf>,
    /// The arm measured against the baseline [default: heuristic].
    #[arg(long, value_enum)]
    pub investigator: Option<InvestigatorName>,
    /// The real Claude Code CLI under bubblewrap with the MCP tools (needs an endpoint:
    /// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL or --model-endpoint).
    #[arg(long)]
    pub real_driver: bool,
    /// replay:heuristic, replay:script=FILE (the replay model, started here on loopback),
    /// or an http(s) base URL.
    #[arg(long, value_name = "SPEC")]
    pub model_endpoint: Option<String>,
    /// The model name passed to the agent (with --investigator codex and a replay:
    /// endpoint, `replay` unless given).
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Execution backend of process agents.
    #[arg(long, value_name = "NAME", default_value = "bubblewrap")]
    pub backend: String,
    /// Let a process investigator run natively (labels and host then within its reach).
    #[arg(long)]
    pub allow_degraded_native: bool,
    /// Claude Code's tools: the MCP rails and queries, or Bash. Codex keeps its shell and
    /// gets the MCP tools beside it, or only the shell.
    #[arg(long, value_enum, default_value = "mcp")]
    pub tools: ToolsName,
    /// The script of the scripted investigator (`anvil-script` v1).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// The command investigator: PROG ARGS... (everything after --command).
    #[arg(long, value_name = "PROG", num_args = 1.., allow_hyphen_values = true)]
    pub command: Vec<String>,
    /// Run each trial this many times (the noise floor per arm) [default: 1].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeats: Option<u32>,
    /// Trials run at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: Option<u32>,
    /// Only these classes (repeatable).
    #[arg(long = "class", value_name = "C")]
    pub classes: Vec<String>,
    /// Only scenarios whose id (`<class>/<name>`) matches this glob (repeatable).
    #[arg(long = "scenario", value_name = "GLOB")]
    pub scenario_globs: Vec<String>,
    /// At most N scenarios (after the filters).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Run a stable share of the scenarios: hash:K/N (K from 1).
    #[arg(long, value_name = "hash:K/N")]
    pub partition: Option<String>,
    /// Continue an interrupted battery in DIR (finished trials kept, the rest run). The
    /// selection, repeats, seed, limits and controls default to the run's own manifest.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// Results directory (must be new or empty).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed of every resampling (intervals are recomputable from results.json) [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Wall-clock limit of one agent run, at least 1 [default: 600].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub trial_timeout: Option<u64>,
    /// Turn limit passed to the agent, at least 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
    /// Budget of the whole battery: scheduling stops before the projected spend passes it.
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// Retries of a trial after an infrastructure failure [default: 2].
    #[arg(long)]
    pub retries: Option<u32>,
    /// Stop (exit 5) after more infrastructure failures than this.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_infra_failures: usize,
    /// Skip the controls (oracle and cheaters).
    #[arg(long)]
    pub no_controls: bool,
    /// One JSON line per finished trial on stdout instead of a progress bar; a final line
    /// with the verdict and the results path.
    #[arg(long)]
    pub json: bool,
    /// Print the JSON Schema of results.json and exit.
    #[arg(long)]
    pub schema: bool,
}

#[derive(Debug, Subcommand)]
pub enum BatteryCommand {
    /// Join the results directories of partition shards into one.
    Merge(MergeArgs),
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard results directories (or results.json files).
    #[arg(required = true, value_name = "DIR")]
    pub shards: Vec<PathBuf>,
    /// The merged results directory (must be new or empty).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Merge despite differing manifests (the differences are printed).
    #[arg(long)]
    pub force: bool,
    #[arg(long)]
    pub json: bool,
}

/// `claude --version` (or the like), for the manifest.
fn agent_version(program: &str) -> Option<String> {
    let out = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn has_bwrap() -> bool {
    crate::sandbox::bubblewrap::find_bwrap(
        &std::env::vars().collect(),
        &std::env::current_dir().unwrap_or_default(),
    )
    .is_ok()
}

/// Why the flags cannot become a battery: a usage error, or an output directory that may
/// not be written.
#[derive(Debug)]
pub(super) enum Refusal {
    Usage(String),
    Output(String),
}

impl From<String> for Refusal {
    fn from(msg: String) -> Refusal {
        Refusal::Usage(msg)
    }
}

/// The battery the flags describe, checked once: every combination that cannot run is
/// refused here, before anything is written. The endpoint, when one is started, must live
/// as long as the battery.
pub(super) fn resolve(a: &BatteryArgs) -> Result<(Config, Option<Endpoint>), Refusal> {
    let (scenarios, labels, bundled) = corpus(a)?;
    let (investigator, backend) = arm_and_backend(a)?;
    let investigator_version = check_runnable(a, investigator, backend)?;
    let partition = a
        .partition
        .as_deref()
        .map(Partition::parse)
        .transpose()
        .map_err(|e| e.to_string())?;
    if let Some(b) = a.max_budget_usd
        && !(b.is_finite() && b >= 0.0)
    {
        return Err("--max-budget-usd must be a non-negative number"
            .to_string()
            .into());
    }
    if bundled {
        check_classes(&a.classes)?;
    }
    let model = ModelEndpoint::resolve(a, investigator)?;
    let (out, resume) = out_dir(a, investigator);
    crate::outpath::check_dir(&out).map_err(|e| Refusal::Output(e.to_string()))?;
    // Codex drives the models it knows in code mode, which a replay player cannot play: it
    // is given a model outside its catalogue (see `driver::codex`).
    let model_name = match (&a.model, investigator) {
        (None, Arm::Codex) if model.name.starts_with("replay:") => Some("replay".to_string()),
        (m, _) => m.clone(),
    };
    // Read once, here: every trial plays these bytes, and the manifest names them.
    let script = a
        .script
        .as_deref()
        .map(Script::load)
        .transpose()
        .map_err(|e| e.to_string())?;
    let jobs = a
        .jobs
        .map(|j| j as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    let cfg = Config {
        scenarios,
        labels: labels.clone(),
        investigator,
        controls: !a.no_controls,
        repeats: a.repeats.unwrap_or(1),
        jobs,
        selector: Selector {
            classes: a.classes.clone(),
            globs: a.scenario_globs.clone(),
            limit: a.limit,
        },
        partition,
        out,
        resume,
        seed: a.seed.unwrap_or(1),
        retries: a.retries.unwrap_or(2),
        max_infra_failures: a.max_infra_failures,
        max_budget_usd: a.max_budget_usd,
        driver: DriverConfig {
            script,
            command: a.command.clone(),
            claude_tools: match a.tools {
                ToolsName::Mcp => ClaudeTools::Mcp,
                ToolsName::Bash => ClaudeTools::Bash,
            },
            backend,
            model: model_name,
            env: model.env,
            timeout: Duration::from_secs(a.trial_timeout.unwrap_or(600)),
            max_turns: a.max_turns,
            hidden: vec![labels],
            engine: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("anvil-bench")),
            priced: investigator.uses_model() && !model.name.starts_with("replay:"),
        },
        investigator_version,
        endpoint: model.name,
    };
    Ok((cfg, model.server))
}

/// The scenarios and labels directories, and whether they are the bundled corpus.
fn corpus(a: &BatteryArgs) -> Result<(PathBuf, PathBuf, bool), String> {
    if let (Some(s), Some(l)) = (&a.scenarios, &a.labels) {
        return Ok((s.clone(), l.clone(), false));
    }
    if !(Path::new(BUNDLED_SCENARIOS).is_dir() && Path::new(BUNDLED_LABELS).is_dir()) {
        return Err(format!(
            "the bundled corpus is not where this binary was built (`{BUNDLED_SCENARIOS}`); pass --scenarios DIR --labels DIR"
        ));
    }
    Ok((
        PathBuf::from(BUNDLED_SCENARIOS),
        PathBuf::from(BUNDLED_LABELS),
        true,
    ))
}

/// The investigator's arm and where it runs (`--real-driver` is Claude Code under
/// bubblewrap).
fn arm_and_backend(a: &BatteryArgs) -> Result<(Arm, Backend), String> {
    let requested = a.investigator.unwrap_or(InvestigatorName::Heuristic);
    if !a.real_driver {
        let backend =
            Backend::from_flags(&a.backend, a.allow_degraded_native).map_err(|e| e.to_string())?;
        return Ok((requested.arm(), backend));
    }
    if requested != InvestigatorName::Heuristic && requested != InvestigatorName::ClaudeCode {
        return Err(
            "--real-driver is --investigator claude-code; do not combine it with another investigator"
                .to_string(),
        );
    }
    Ok((Arm::ClaudeCode, Backend::Bubblewrap))
}

/// Refuses an investigator whose inputs, sandbox or agent program is missing, saying what
/// to pass or install; otherwise the investigator's version for the manifest (the agent
/// program's `--version`, asked once, or anvil-bench's own).
fn check_runnable(a: &BatteryArgs, investigator: Arm, backend: Backend) -> Result<String, String> {
    if investigator == Arm::Scripted && a.script.is_none() {
        return Err("--investigator scripted needs --script FILE".into());
    }
    if investigator == Arm::Command && a.command.is_empty() {
        return Err("--investigator command needs --command PROG [ARGS...]".into());
    }
    if investigator.spawns() && backend == Backend::Bubblewrap && !has_bwrap() {
        return Err(
            "this investigator runs under bubblewrap, which is not installed: `apt-get install bubblewrap` (or pass --backend native --allow-degraded-native, and the labels are within the agent's reach)"
                .into(),
        );
    }
    if investigator.spawns()
        && matches!(
            backend,
            Backend::Native {
                allow_degraded_native: false
            }
        )
    {
        return Err("--backend native needs --allow-degraded-native".into());
    }
    match investigator {
        Arm::ClaudeCode => agent_version("claude").ok_or_else(|| {
            "the real driver needs the Claude Code CLI: `npm i -g @anthropic-ai/claude-code`"
                .to_string()
        }),
        Arm::Codex => agent_version("codex").ok_or_else(|| {
            "the codex investigator needs the Codex CLI: `npm i -g @openai/codex`".to_string()
        }),
        _ => Ok(format!("anvil-bench {}", env!("CARGO_PKG_VERSION"))),
    }
}

/// Refuses a `--class` the bundled corpus does not have.
fn check_classes(classes: &[String]) -> Result<(), String> {
    for c in classes {
        if !crate::battery::Class::ALL.iter().any(|k| k.as_str() == c) {
            return Err(format!(
                "--class `{c}`: the bundled corpus has the classes {}",
                crate::battery::Class::ALL
                    .map(super::super::battery::corpus::Class::as_str)
                    .join(", ")
            ));
        }
    }
    Ok(())
}

/// Where the results go, and whether the battery resumes there.
fn out_dir(a: &BatteryArgs, investigator: Arm) -> (PathBuf, bool) {
    if let Some(dir) = &a.resume {
        return (dir.clone(), true);
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let stamp = crate::case::lifecycle::now()
            .replace([':', '-'], "")
            .split('.')
            .next()
            .unwrap_or_default()
            .to_string();
        PathBuf::from("reports").join(format!("{stamp}-{investigator}"))
    });
    (out, false)
}

/// The model a model-driven investigator talks to: the variables that point it there, the
/// endpoint's name for the manifest, and the replay server when this process runs one.
struct ModelEndpoint {
    env: Vec<(String, String)>,
    name: String,
    server: Option<Endpoint>,
}

impl ModelEndpoint {
    fn resolve(a: &BatteryArgs, investigator: Arm) -> Result<ModelEndpoint, String> {
        let mut endpoint = ModelEndpoint {
            env: Vec::new(),
            name: "none".to_string(),
            server: None,
        };
        if !investigator.uses_model() {
            return Ok(endpoint);
        }
        let var = if investigator == Arm::Codex {
            "OPENAI"
        } else {
            "ANTHROPIC"
        };
        if let Some(spec) = &a.model_endpoint {
            let ep = crate::battery::endpoint::start(spec, None).map_err(|e| e.to_string())?;
            endpoint
                .env
                .push((format!("{var}_BASE_URL"), ep.url.clone()));
            if std::env::var(format!("{var}_API_KEY")).is_err() {
                endpoint
                    .env
                    .push((format!("{var}_API_KEY"), "replay".into()));
            }
            endpoint.name.clone_from(&ep.name);
            endpoint.server = Some(ep);
            return Ok(endpoint);
        }
        let base = std::env::var(format!("{var}_BASE_URL")).ok();
        let key = std::env::var(format!("{var}_API_KEY")).ok();
        endpoint.name = match (base, key) {
            (Some(b), _) => b,
            (None, Some(_)) => "vendor API".into(),
            (None, None) => {
                return Err(format!(
                    "{investigator} needs a model: set {var}_API_KEY (the real model, through the allowlisting proxy), {var}_BASE_URL, or pass --model-endpoint replay:heuristic"
                ));
            }
        };
        Ok(endpoint)
    }
}
