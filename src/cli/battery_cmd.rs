//! `battery`, `battery merge` and the hidden `battery-cheater` agent.
//!
//! Parse, then resolve: flag combinations are checked here once into a
//! [`runner::Config`]; the runner emits events and this module alone prints them.

use std::path::{Path, PathBuf};

use clap::Args;

use super::battery_args::{
    self as resolve, BatteryArgs, BatteryCommand, InvestigatorName, MergeArgs,
};
use crate::battery::arm::Arm;
use crate::battery::results::{self, ResultsDoc};
use crate::battery::runner::{self, BatteryError, Config, Event, Verdict};
use crate::cli::exit::{self, ToExitCode};
use crate::process::CancelHandle;

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
    let code = e.exit_code();
    eprintln!("error: {e}");
    if json {
        println!(
            "{}",
            serde_json::json!({"event": "error", "message": e.to_string(), "exitCode": code})
        );
    }
    code
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
    // The cheaters run only as controls; the oracle may be the investigator itself.
    if !m.arms.contains(&Arm::CheaterReach) {
        a.no_controls = true;
    }
}

pub fn run(mut a: BatteryArgs) -> u8 {
    if let Some(BatteryCommand::Merge(m)) = &a.action {
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
    // Parse, then resolve: every flag combination is checked here, once.
    match resolve::resolve(&a) {
        // The endpoint (a replay model this process serves) lives until the battery ends.
        Ok((cfg, _endpoint)) => execute(&cfg, a.json),
        Err(resolve::Refusal::Usage(msg)) => usage(&msg),
        Err(resolve::Refusal::Output(e)) => battery_error(&BatteryError::Input(e), a.json),
    }
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
    let bar = progress_bar(json);
    let outcome = runner::run(cfg, &cancel, &mut |e| show_event(&bar, cfg, json, e));
    bar.finish_and_clear();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => return battery_error(&e, json),
    };
    let code = outcome.verdict.exit_code();
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
        say_verdict(&outcome, cfg);
    }
    code
}

/// The trial counter on stderr (hidden with `--json`, whose events go to stdout).
fn progress_bar(json: bool) -> indicatif::ProgressBar {
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
    bar
}

/// One runner event, as a person (the bar, stderr) or a program (`--json` lines) reads it.
fn show_event(bar: &indicatif::ProgressBar, cfg: &Config, json: bool, e: Event) {
    let paid = cfg.investigator.uses_model() && !cfg.endpoint.starts_with("replay:");
    match e {
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
    }
}

/// What a battery that did not simply complete means, and what to do next.
fn say_verdict(outcome: &runner::Outcome, cfg: &Config) {
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

/// The per-class table, the controls and the infrastructure failures.
fn print_summary(doc: &ResultsDoc) {
    print!(
        "{}",
        crate::report::printable(&crate::report::terminal::summary(doc))
    );
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

fn merge(m: &MergeArgs) -> u8 {
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
