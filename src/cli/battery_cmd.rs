//! `battery`, `battery merge` and the hidden `battery-cheater` agent.
//!
//! Parse, then resolve: flag combinations are checked here once into a
//! [`runner::Config`]; the runner emits events and this module alone prints them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use crate::battery::arm::Arm;
use crate::battery::plan::{Partition, Selector};
use crate::battery::results::{self, ResultsDoc};
use crate::battery::runner::{self, BatteryError, Config, Event, Verdict};
use crate::battery::trial::DriverConfig;
use crate::cli::exit;
use crate::driver::ClaudeTools;
use crate::process::CancelHandle;
use crate::sandbox::Backend;

/// Exit code when the battery was interrupted (128 + SIGINT, as shells report it).
pub const CANCELLED: u8 = 130;

/// The bundled corpus, where this binary was built from.
const BUNDLED_SCENARIOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
const BUNDLED_LABELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/labels-private");

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
    fn arm(self) -> Arm {
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
    /// Wall-clock limit of one agent run [default: 600].
    #[arg(long, value_name = "SECS")]
    pub trial_timeout: Option<u64>,
    /// Turn limit passed to the agent.
    #[arg(long, value_name = "N")]
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

#[derive(Debug, Args)]
pub struct CheaterArgs {
    /// The canary handed on purpose (the second variant).
    #[arg(long)]
    pub canary: Option<String>,
}

pub fn cheater(args: CheaterArgs) -> u8 {
    crate::battery::cheater::main(args.canary)
}

fn usage(msg: &str) -> u8 {
    eprintln!("error: {msg}");
    exit::USAGE
}

fn battery_error(e: &BatteryError, json: bool) -> u8 {
    let code = match e {
        BatteryError::Input(_) | BatteryError::Incompatible(_) | BatteryError::Fatal(_) => {
            exit::REJECTED
        }
    };
    eprintln!("error: {e}");
    if json {
        println!(
            "{}",
            serde_json::json!({"event": "error", "message": e.to_string(), "exitCode": code})
        );
    }
    code
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

/// On `--resume`, whatever the user did not say is taken from the run's manifest, so
/// `battery --resume DIR` alone continues a battery (anything said differently is then
/// refused by the runner, naming the field).
fn fill_from_manifest(a: &mut BatteryArgs, m: &results::Manifest) {
    let inv = match m.investigator.arm {
        Arm::Oracle => Some(InvestigatorName::Oracle),
        Arm::Overclaim => Some(InvestigatorName::Overclaim),
        Arm::Scripted => Some(InvestigatorName::Scripted),
        Arm::ClaudeCode => Some(InvestigatorName::ClaudeCode),
        Arm::Codex => Some(InvestigatorName::Codex),
        Arm::Command => Some(InvestigatorName::Command),
        _ => Some(InvestigatorName::Heuristic),
    };
    if a.investigator.is_none() && !a.real_driver {
        a.investigator = inv;
    }
    a.repeats = a.repeats.or(Some(m.repeats));
    a.seed = a.seed.or(Some(m.seed));
    a.trial_timeout = a.trial_timeout.or(Some(m.trial_timeout_secs));
    a.retries = a.retries.or(Some(m.retries));
    a.max_turns = a.max_turns.or(m.max_turns);
    a.max_budget_usd = a.max_budget_usd.or(m.max_budget_usd);
    if a.classes.is_empty() && a.scenario_globs.is_empty() && a.limit.is_none() {
        a.classes = m.selection.classes.clone();
        a.scenario_globs = m.selection.scenarios.clone();
        a.limit = m.selection.limit;
    }
    if a.partition.is_none() {
        a.partition = m.partition.clone();
    }
    if !m.arms.contains(&Arm::Oracle) {
        a.no_controls = true;
    }
}

pub fn run(mut a: BatteryArgs) -> u8 {
    if let Some(BatteryCommand::Merge(m)) = a.action {
        return merge(m);
    }
    if a.schema {
        crate::cli::print_json(&results::schema());
        return exit::OK;
    }
    if let Some(dir) = &a.resume {
        match runner::read_manifest(&dir.join(results::MANIFEST_JSON)) {
            Ok(m) => fill_from_manifest(&mut a, &m),
            Err(e) => return battery_error(&e, a.json),
        }
    }
    let requested = a.investigator.unwrap_or(InvestigatorName::Heuristic);
    // Parse, then resolve.
    let (scenarios, labels, bundled) = match (&a.scenarios, &a.labels) {
        (Some(s), Some(l)) => (s.clone(), l.clone(), false),
        _ => (
            PathBuf::from(BUNDLED_SCENARIOS),
            PathBuf::from(BUNDLED_LABELS),
            true,
        ),
    };
    if bundled && !(Path::new(BUNDLED_SCENARIOS).is_dir() && Path::new(BUNDLED_LABELS).is_dir()) {
        return usage(&format!(
            "the bundled corpus is not where this binary was built (`{BUNDLED_SCENARIOS}`); pass --scenarios DIR --labels DIR"
        ));
    }
    let investigator = if a.real_driver {
        if requested != InvestigatorName::Heuristic && requested != InvestigatorName::ClaudeCode {
            return usage(
                "--real-driver is --investigator claude-code; do not combine it with another investigator",
            );
        }
        Arm::ClaudeCode
    } else {
        requested.arm()
    };
    let backend = if a.real_driver {
        Backend::Bubblewrap
    } else {
        match Backend::from_flags(&a.backend, a.allow_degraded_native) {
            Ok(b) => b,
            Err(e) => return usage(&e.to_string()),
        }
    };
    if investigator == Arm::Scripted && a.script.is_none() {
        return usage("--investigator scripted needs --script FILE");
    }
    if investigator == Arm::Command && a.command.is_empty() {
        return usage("--investigator command needs --command PROG [ARGS...]");
    }
    if investigator.spawns() && backend == Backend::Bubblewrap && !has_bwrap() {
        return usage(
            "this investigator runs under bubblewrap, which is not installed: `apt-get install bubblewrap` (or pass --backend native --allow-degraded-native, and the labels are within the agent's reach)",
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
        return usage("--backend native needs --allow-degraded-native");
    }
    if investigator == Arm::ClaudeCode && agent_version("claude").is_none() {
        return usage(
            "the real driver needs the Claude Code CLI: `npm i -g @anthropic-ai/claude-code`",
        );
    }
    if investigator == Arm::Codex && agent_version("codex").is_none() {
        return usage("the codex investigator needs the Codex CLI: `npm i -g @openai/codex`");
    }
    let partition = match a.partition.as_deref().map(Partition::parse).transpose() {
        Ok(p) => p,
        Err(e) => return usage(&e),
    };
    if let Some(b) = a.max_budget_usd
        && !(b.is_finite() && b >= 0.0)
    {
        return usage("--max-budget-usd must be a non-negative number");
    }
    for c in &a.classes {
        if !crate::battery::Class::ALL.iter().any(|k| k.as_str() == c) && bundled {
            return usage(&format!(
                "--class `{c}`: the bundled corpus has the classes {}",
                crate::battery::Class::ALL.map(|k| k.as_str()).join(", ")
            ));
        }
    }
    // The model endpoint of a model-driven investigator.
    let mut env = Vec::new();
    let mut endpoint_name = "none".to_string();
    let _endpoint = if investigator.uses_model() {
        let var = if investigator == Arm::Codex {
            "OPENAI"
        } else {
            "ANTHROPIC"
        };
        match &a.model_endpoint {
            Some(spec) => match crate::battery::endpoint::start(spec, None) {
                Ok(ep) => {
                    env.push((format!("{var}_BASE_URL"), ep.url.clone()));
                    if std::env::var(format!("{var}_API_KEY")).is_err() {
                        env.push((format!("{var}_API_KEY"), "replay".into()));
                    }
                    endpoint_name = ep.name.clone();
                    Some(ep)
                }
                Err(e) => return usage(&e),
            },
            None => {
                let base = std::env::var(format!("{var}_BASE_URL")).ok();
                let key = std::env::var(format!("{var}_API_KEY")).ok();
                match (base, key) {
                    (Some(b), _) => endpoint_name = b,
                    (None, Some(_)) => endpoint_name = "vendor API".into(),
                    (None, None) => {
                        return usage(&format!(
                            "{} needs a model: set {var}_API_KEY (the real model, through the allowlisting proxy), {var}_BASE_URL, or pass --model-endpoint replay:heuristic",
                            investigator
                        ));
                    }
                }
                None
            }
        }
    } else {
        None
    };
    // Codex drives the models it knows in code mode, which a replay player cannot play: it
    // is given a model outside its catalogue (see `driver::codex`).
    let model = match (&a.model, investigator) {
        (None, Arm::Codex) if endpoint_name.starts_with("replay:") => Some("replay".to_string()),
        (m, _) => m.clone(),
    };
    let engine = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("anvil-bench"));
    let investigator_version = match investigator {
        Arm::ClaudeCode => agent_version("claude").unwrap_or_default(),
        Arm::Codex => agent_version("codex").unwrap_or_default(),
        _ => format!("anvil-bench {}", env!("CARGO_PKG_VERSION")),
    };
    let jobs = a
        .jobs
        .map(|j| j as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let (out, resume) = match &a.resume {
        Some(dir) => (dir.clone(), true),
        None => (
            a.out.clone().unwrap_or_else(|| {
                let stamp = crate::case::lifecycle::now()
                    .replace([':', '-'], "")
                    .split('.')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                PathBuf::from("reports").join(format!("{stamp}-{investigator}"))
            }),
            false,
        ),
    };
    if let Err(e) = crate::outpath::check_dir(&out) {
        return battery_error(&BatteryError::Input(e.to_string()), a.json);
    }
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
            script: a.script.clone(),
            command: a.command.clone(),
            claude_tools: match a.tools {
                ToolsName::Mcp => ClaudeTools::Mcp,
                ToolsName::Bash => ClaudeTools::Bash,
            },
            backend,
            model: model.clone(),
            env,
            timeout: Duration::from_secs(a.trial_timeout.unwrap_or(600)),
            max_turns: a.max_turns,
            hidden: vec![labels],
            engine,
            priced: investigator.uses_model() && !endpoint_name.starts_with("replay:"),
        },
        investigator_version,
        endpoint: endpoint_name,
    };
    execute(&cfg, a.json)
}

/// Cancels `cancel` on the first Ctrl-C (a second one ends the process the usual way).
fn on_ctrl_c(cancel: CancelHandle) {
    let _ = std::thread::Builder::new()
        .name("ctrl-c".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if tokio::signal::ctrl_c().await.is_ok() {
                    cancel.cancel();
                    eprintln!(
                        "\ninterrupted: stopping the running agents and keeping what finished"
                    );
                }
            });
        });
}

fn execute(cfg: &Config, json: bool) -> u8 {
    let cancel = CancelHandle::new();
    on_ctrl_c(cancel.clone());
    let bar = if json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(0)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} trials · {elapsed} · eta {eta} · {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let paid = cfg.investigator.uses_model() && !cfg.endpoint.starts_with("replay:");
    let mut on_event = |e: Event| match e {
        Event::Note(n) => bar.suspend(|| eprintln!("note: {n}")),
        Event::Planned {
            total,
            already_done,
            scenarios,
            arms,
            repeats,
            jobs,
        } => {
            let arms: Vec<&str> = arms.iter().map(|a| a.as_str()).collect();
            let budget = match cfg.max_budget_usd {
                Some(b) => format!("budget ${b:.2}"),
                None if paid => "no budget cap (set --max-budget-usd)".into(),
                None => "no model spend".into(),
            };
            if !json {
                eprintln!(
                    "battery: {total} trials ({scenarios} scenarios × {} arms: {} × {repeats} repeat{}), {jobs} jobs, {budget}{}",
                    arms.len(),
                    arms.join(", "),
                    if repeats == 1 { "" } else { "s" },
                    if already_done > 0 {
                        format!("; {already_done} already done")
                    } else {
                        String::new()
                    }
                );
                if paid && let Some(b) = cfg.max_budget_usd {
                    eprintln!(
                        "cost estimate: at most ${b:.2} (the battery stops scheduling before it passes)"
                    );
                }
            }
            bar.set_length(total as u64);
            bar.set_position(already_done as u64);
        }
        Event::Retrying { id, attempt, error } => {
            bar.suspend(|| eprintln!("retrying {id} (attempt {attempt} failed: {error})"));
        }
        Event::Finished {
            record,
            done,
            total: _,
            cost_usd,
            infra,
        } => {
            if json {
                println!("{}", serde_json::json!({"event": "trial", "trial": record}));
            }
            bar.set_position(done as u64);
            bar.set_message(format!("${cost_usd:.2} · {infra} infra"));
        }
    };
    let outcome = runner::run(cfg, &cancel, &mut on_event);
    bar.finish_and_clear();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => return battery_error(&e, json),
    };
    let code = match outcome.verdict {
        Verdict::Completed => exit::OK,
        Verdict::ControlsFailed | Verdict::LabelsChanged | Verdict::Nondeterministic => {
            exit::REJECTED
        }
        Verdict::InfraLimit => exit::DRIVER,
        Verdict::Cancelled => CANCELLED,
    };
    let results_path = outcome.dir.join(results::RESULTS_JSON);
    if !json {
        print_summary(&outcome.results);
        println!("results: {}", results_path.display());
    }
    let reports = write_reports(&outcome.dir, &outcome.results, json);
    if json {
        println!(
            "{}",
            serde_json::json!({"event": "done", "verdict": format!("{:?}", outcome.verdict),
                "results": results_path, "reports": reports, "exitCode": code})
        );
    } else {
        match outcome.verdict {
            Verdict::Completed => {}
            Verdict::Cancelled => eprintln!(
                "interrupted: continue with `anvil-bench battery --resume {}`",
                outcome.dir.display()
            ),
            Verdict::InfraLimit => eprintln!(
                "stopped: more than {} infrastructure failures",
                cfg.max_infra_failures
            ),
            Verdict::LabelsChanged => eprintln!(
                "FAILED: the label set changed during the run (seal {} before, {} after)",
                outcome.results.manifest.label_seal, outcome.results.label_seal_after
            ),
            Verdict::ControlsFailed => eprintln!("FAILED: a control failed (see above)"),
            Verdict::Nondeterministic => eprintln!(
                "FAILED: deterministic arms disagreed with themselves: {}",
                outcome.results.nondeterministic.join(", ")
            ),
        }
    }
    code
}

/// The per-class table, the controls and the infrastructure failures.
fn print_summary(doc: &ResultsDoc) {
    print!("{}", crate::report::terminal::summary(doc));
}

/// report.md and report.html beside results.json. A failure here loses nothing (the
/// reports are regenerated from results.json by `report show`), so it is a warning.
fn write_reports(dir: &Path, doc: &ResultsDoc, json: bool) -> Vec<PathBuf> {
    match crate::report::write_beside(dir, doc) {
        Ok(paths) => {
            if !json {
                for p in &paths {
                    println!("report: {}", p.display());
                }
            }
            paths
        }
        Err(e) => {
            eprintln!(
                "warning: the reports were not written ({e}); regenerate them with `anvil-bench report show {} --format html --out FILE`",
                dir.display()
            );
            vec![]
        }
    }
}

fn merge(m: MergeArgs) -> u8 {
    if let Err(e) = crate::outpath::check_dir(&m.out) {
        return battery_error(&BatteryError::Input(e.to_string()), m.json);
    }
    match crate::battery::merge::merge(&m.shards, &m.out, m.force) {
        Ok((doc, warnings)) => {
            for w in &warnings {
                eprintln!("warning: {w}");
            }
            if !m.json {
                print_summary(&doc);
                println!("results: {}", m.out.join(results::RESULTS_JSON).display());
            }
            let reports = write_reports(&m.out, &doc, m.json);
            if m.json {
                println!(
                    "{}",
                    serde_json::json!({"event": "merged", "results": m.out.join(results::RESULTS_JSON),
                        "reports": reports, "trials": doc.trials.len()})
                );
            }
            exit::OK
        }
        Err(e) => battery_error(&e, m.json),
    }
}
