//! One trial: a fresh world, a case opened on the scenario, one arm's investigation, the
//! rails to the end (finalize, close to a scratch AIR), contamination, then — only then —
//! the label and the score.
//!
//! Invariant: every arm goes through the same open → investigate → finalize → close code
//! and is scored by the same [`super::score::score`]; the label is fetched through a
//! [`Closed`] proof made after the investigation returned (R-BAT-2); a failure the agent's
//! infrastructure caused is an [`TrialError::Infra`], never a wrong answer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::arm::Arm;
use super::contamination;
use super::results::{
    FORMAT_VERSION, Phases, RUNS_DIR, TRIAL_FORMAT, TrialRecord, trial_file_name,
};
use super::score;
use super::vault::{Closed, Vault};
use super::workspace::{Template, TrialDir, move_tree};
use crate::case::RunHandle;
use crate::case::finalize::{ResultDoc, Status};
use crate::case::lifecycle::State;
use crate::case::{CaseError, OpenMode, OpenRequest};
use crate::driver::scripted::{ScriptDoc, ScriptedAgentDriver};
use crate::driver::{
    AgentDriver, ClaudeCodeDriver, ClaudeTools, CodexDriver, CommandDriver, ExecutionPolicy,
};
use crate::process::{CancelHandle, Outcome};
use crate::reconcile::CloseRequest;

/// A scenario ready to run: its identity and its prepared starting state.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub id: String,
    pub class: String,
    pub skill: String,
    pub target: String,
    pub deficiency: Option<String>,
    pub template: Template,
}

impl Prepared {
    /// Prepares `scenario`'s starting state under `<work_root>/templates/<random>`: a
    /// neutral path naming nothing of the corpus (R-BAT-7).
    ///
    /// # Errors
    ///
    /// A [`WorkspaceError`](super::workspace::WorkspaceError) when the template directory
    /// cannot be created, the scenario repository holds anything but directories and
    /// regular files (`Refused`) or cannot be copied, committing it with git fails (`Git`),
    /// or the AIR cannot be read or written.
    pub fn new(
        scenario: &super::corpus::Scenario,
        work_root: &Path,
        git: bool,
    ) -> Result<Prepared, super::workspace::WorkspaceError> {
        let dir = work_root
            .join("templates")
            .join(ulid::Ulid::new().to_string().to_lowercase());
        let template = super::workspace::prepare(&scenario.repo(), &scenario.air(), &dir, git)?;
        Ok(Prepared {
            id: scenario.dir_id.clone(),
            class: scenario.doc.class.to_string(),
            skill: scenario.doc.skill.clone(),
            target: scenario.doc.target.clone(),
            deficiency: scenario.doc.deficiency.map(|d| d.to_string()),
            template,
        })
    }
}

/// A `--script` file, read and checked once when the battery is configured: every trial
/// plays these steps and the manifest names their digest, so an edit to the file during a
/// run changes neither what runs nor what the results say ran.
#[derive(Debug, Clone)]
pub struct Script {
    pub path: PathBuf,
    /// `sha256:` of the file's bytes.
    pub digest: String,
    pub doc: Arc<ScriptDoc>,
}

impl Script {
    /// Reads `path` as [`ScriptDoc::load`] does (a regular file within the document cap,
    /// no symlink followed, strict fields) and keeps the digest of the bytes it parsed.
    ///
    /// # Errors
    ///
    /// Any error of [`ScriptDoc::load`], naming the file and the field.
    pub fn load(path: &Path) -> Result<Script, CaseError> {
        let (doc, bytes) = ScriptDoc::read(path)?;
        Ok(Script {
            path: path.to_path_buf(),
            digest: crate::canon::bytes_hash(&bytes),
            doc: Arc::new(doc),
        })
    }
}

/// How process agents are run.
#[derive(Debug, Clone)]
pub struct DriverConfig {
    /// `--script FILE` for the scripted investigator, loaded once.
    pub script: Option<Script>,
    /// `--command PROG ARGS...` for the command investigator.
    pub command: Vec<String>,
    pub claude_tools: ClaudeTools,
    pub backend: crate::sandbox::Backend,
    pub model: Option<String>,
    /// Extra environment for the agent (the model endpoint), over the ambient one.
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    pub max_turns: Option<u32>,
    /// Paths never mounted into a sandbox (the labels).
    pub hidden: Vec<PathBuf>,
    /// The anvil-bench binary agents call for rails (and the cheater runs as).
    pub engine: PathBuf,
    /// Whether the model is paid for: a replay model costs nothing, whatever price the
    /// agent computes from its token counts.
    pub priced: bool,
}

impl DriverConfig {
    /// For in-process arms only: no process agent is configured.
    #[must_use]
    pub fn in_process() -> DriverConfig {
        DriverConfig {
            script: None,
            command: vec![],
            claude_tools: ClaudeTools::Mcp,
            backend: crate::sandbox::Backend::Native {
                allow_degraded_native: false,
            },
            model: None,
            env: vec![],
            timeout: Duration::from_mins(10),
            max_turns: None,
            hidden: vec![],
            engine: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("anvil-bench")),
            priced: false,
        }
    }
}

/// What a trial needs besides its scenario and arm.
pub struct TrialContext<'a> {
    pub vault: &'a Vault,
    pub driver: &'a DriverConfig,
    /// Where trial worlds are made (a neutral temporary directory).
    pub work_root: &'a Path,
    /// The results directory (`runs/` is kept under it).
    pub out_dir: &'a Path,
    /// The most this trial may spend, when the battery has a budget.
    pub budget_usd: Option<f64>,
    pub cancel: &'a CancelHandle,
}

#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    /// The agent's infrastructure failed (driver failure, endpoint, timeout): retried, then
    /// reported apart.
    #[error("{0}")]
    Infra(String),
    /// The battery cannot go on (the label set changed, the results directory is unwritable).
    #[error("{0}")]
    Fatal(String),
}

/// What the investigation reported.
#[derive(Debug, Default)]
struct Investigation {
    tokens_in: u64,
    tokens_out: u64,
    cost_usd: f64,
    turns: u32,
    reason: Option<String>,
    /// A process agent's process, spawn to exit.
    process_ms: Option<u64>,
}

/// A trial's stopwatch: read at the end of each phase for the time since the previous
/// read, and at the end for the whole.
struct Lap {
    started: Instant,
    last: Instant,
}

impl Lap {
    fn start() -> Lap {
        let now = Instant::now();
        Lap {
            started: now,
            last: now,
        }
    }

    /// Microseconds since the previous read (or the start).
    fn next(&mut self) -> u64 {
        let now = Instant::now();
        let us = u64::try_from(now.duration_since(self.last).as_micros()).unwrap_or(u64::MAX);
        self.last = now;
        us
    }

    /// Milliseconds since the start.
    fn wall_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

fn infra(what: &str, e: impl std::fmt::Display) -> TrialError {
    TrialError::Infra(format!("{what}: {e}"))
}

/// Runs one trial of `scenario` by `arm`, repeat `repeat`.
///
/// # Errors
///
/// `TrialError::Infra` when the trial's repository cannot be prepared, the agent's
/// infrastructure fails, or the case cannot be ended; `TrialError::Fatal` when case open
/// refuses the scenario, the label set changed after its seal (or the arm may not be told
/// the label), the scripted or command arm is misconfigured, or the run cannot be kept
/// under `runs/`.
pub fn run(
    scenario: &Arc<Prepared>,
    arm: Arm,
    repeat: u32,
    ctx: &TrialContext,
) -> Result<TrialRecord, TrialError> {
    let mut lap = Lap::start();
    let id = super::results::trial_id(&scenario.id, arm, repeat);
    let world = TrialDir::create(ctx.work_root, &scenario.template)
        .map_err(|e| infra("preparing the trial's repository", e))?;
    let prepare_us = lap.next();
    // The trial's case is disposable: relaxed durability on this thread (its record is
    // written durably by the runner once the trial ends).
    let result =
        crate::fsio::relaxed(|| run_in(scenario, arm, repeat, &id, &world, ctx, prepare_us, lap));
    world.remove();
    result
}

#[allow(clippy::too_many_arguments)]
fn run_in(
    scenario: &Arc<Prepared>,
    arm: Arm,
    repeat: u32,
    id: &str,
    world: &TrialDir,
    ctx: &TrialContext,
    prepare_us: u64,
    mut lap: Lap,
) -> Result<TrialRecord, TrialError> {
    let run = open_case(scenario, arm, world)?;
    let current = run.doc().target.current.clone();
    let open_us = lap.next();

    let investigation = investigate(scenario, arm, &run, ctx)?;
    let investigate_us = lap.next();

    // The agent is done. Whatever it left unfinished, the harness ends honestly: an
    // unfinalized case is finalized `insufficient_evidence` by the harness and scored as
    // no answer.
    let finalized_by_agent = state(&run).is_some_and(ended);
    let mut reason = investigation.reason.clone();
    if !finalized_by_agent {
        finalize_for_the_agent(&run, &mut reason);
    }
    let tier = close_for_the_tier(&run, world.dir.join("scratch-air.json"), &mut reason);
    let end_us = lap.next();
    let result: Option<ResultDoc> =
        crate::case::store::read_doc(run.dir(), crate::case::store::RESULT_JSON)
            .ok()
            .flatten();

    // Contamination: every canary, everywhere the trial could have written.
    let found = contamination::scan(
        &[("run", run.dir()), ("repo", world.repo.as_path())],
        ctx.vault.canaries(),
    );
    let reached_labels = matches!(arm, Arm::CheaterReach)
        .then(|| cheater_reached(&run.dir().join(crate::case::run::WORKSPACE_DIR)));
    let scan_us = lap.next();

    // Only now the label (R-BAT-2).
    let proof = Closed::check(&run).map_err(|e| infra("ending the case", e))?;
    let label = ctx
        .vault
        .label_for(&scenario.id, &proof)
        .map_err(|e| TrialError::Fatal(e.to_string()))?;
    let scored_result = result.as_ref().filter(|_| finalized_by_agent);
    let s = score::score(scored_result, tier.as_deref(), &current, &label);
    let score_us = lap.next();

    // Keep the case run under runs/.
    let stem = keep_run(ctx.out_dir, id, run)?;
    let phases = Phases {
        prepare_us,
        open_us,
        investigate_us,
        agent_process_us: investigation.process_ms.map(|ms| ms.saturating_mul(1000)),
        end_us,
        scan_us,
        score_us,
        keep_us: lap.next(),
    };

    let mut contamination = found.canaries;
    contamination.extend(
        found
            .special_files
            .iter()
            .map(|f| format!("{f} (not a regular file)")),
    );
    Ok(TrialRecord {
        format: TRIAL_FORMAT.into(),
        format_version: FORMAT_VERSION,
        id: id.to_string(),
        scenario: scenario.id.clone(),
        class: scenario.class.clone(),
        skill: scenario.skill.clone(),
        arm,
        repeat,
        status: scored_result.map(|r| r.status.to_string()),
        expected_status: Some(label.expect.status.to_string()),
        expected: serde_json::to_value(&label.expect).ok(),
        tier,
        patch: scored_result
            .and_then(|r| r.patch.clone())
            .map(|p| p.into_iter().collect()),
        reason: scored_result.and_then(|r| r.reason.clone()).or(reason),
        status_correct: s.status_correct,
        values_correct: s.values_correct,
        correct: s.correct,
        grounded: s.grounded,
        evidence_recall: s.evidence_recall,
        claims: s.claims,
        unsupported_claims: s.unsupported_claims,
        harmful: s.harmful,
        harmful_at_auto: s.harmful_at_auto,
        // A planted symlink or FIFO is an attempt on the host's reads: flagged as well.
        contaminated: !contamination.is_empty(),
        contamination,
        reached_labels,
        infra: None,
        attempts: 1,
        tokens_in: investigation.tokens_in,
        tokens_out: investigation.tokens_out,
        cost_usd: investigation.cost_usd,
        turns: investigation.turns,
        wall_ms: lap.wall_ms(),
        phases: Some(phases),
        start_digest: world.start_digest.clone(),
        run: Some(format!("{RUNS_DIR}/{stem}")),
    })
}

/// Opens the scenario's case in the trial's world, as arm `arm`.
fn open_case(scenario: &Prepared, arm: Arm, world: &TrialDir) -> Result<RunHandle, TrialError> {
    crate::case::open(&OpenRequest {
        air: world.air.clone(),
        repo: world.repo.clone(),
        skill: scenario.skill.clone(),
        target: scenario.target.clone(),
        deficiency: scenario.deficiency.clone(),
        cases_dir: world.cases.clone(),
        executor: format!("battery:{arm}"),
        scopes: vec![],
        mode: OpenMode::New,
        tool_limits: vec![],
        snapshots: vec![],
    })
    .map_err(|e| {
        TrialError::Fatal(format!(
            "{}: case open refused the scenario: {e}",
            scenario.id
        ))
    })
    .and_then(|opened| RunHandle::open(&opened.run_dir).map_err(|e| infra("loading the case", e)))
}

/// The harness finalizes a case its investigator left unfinished, `insufficient_evidence`,
/// and says why in `reason`.
fn finalize_for_the_agent(run: &RunHandle, reason: &mut Option<String>) {
    let why = "the investigator ended without finalizing";
    if let Err(e) =
        crate::fsio::relaxed(|| run.finalize(Some(Status::InsufficientEvidence), Some(why), None))
    {
        *reason = Some(format!("{why}; the harness could not finalize either: {e}"));
    } else {
        reason.get_or_insert_with(|| why.to_string());
    }
}

/// Closes the case to the scratch AIR `scratch` (the tier is what matters, nothing is
/// applied for real); what cannot be applied unattended (a review or reject tier, a decline
/// with nothing to apply) is closed without applying, so every trial's case ends closed.
/// The tier, or `None` with the refusal in `reason`.
fn close_for_the_tier(
    run: &RunHandle,
    scratch: PathBuf,
    reason: &mut Option<String>,
) -> Option<String> {
    let closed = crate::fsio::relaxed(|| {
        let apply = CloseRequest {
            apply: Some(scratch),
            approved_by: None,
        };
        match run.close(&apply, None) {
            Err(CaseError::Rail {
                kind: "needs_approval" | "nothing_to_apply" | "rejected",
                ..
            }) => run.close(&CloseRequest::default(), None),
            other => other,
        }
    });
    match &closed {
        Ok(doc) => doc.tier.map(|t| t.as_str().to_string()),
        Err(e) => {
            reason.get_or_insert_with(|| format!("close refused: {e}"));
            None
        }
    }
}

/// Moves the case run under the results' `runs/` (the handle is spent: the run is no longer
/// where it was opened); the name it is kept under.
fn keep_run(out_dir: &Path, id: &str, run: RunHandle) -> Result<String, TrialError> {
    let stem = trial_file_name(id);
    let stem = stem.trim_end_matches(".json");
    let kept = out_dir.join(RUNS_DIR).join(stem);
    let _ = std::fs::remove_dir_all(&kept);
    move_tree(run.dir(), &kept).map_err(|e| TrialError::Fatal(format!("keeping the run: {e}")))?;
    Ok(stem.to_string())
}

/// Finalized or closed: the investigation's answer is fixed.
fn ended(s: State) -> bool {
    matches!(s, State::Finalized | State::Closed)
}

fn state(run: &RunHandle) -> Option<State> {
    run.lifecycle().ok().map(|l| l.state)
}

/// The reaching cheater's own account (in the run's `workspace`) of whether it read any
/// label file.
fn cheater_reached(workspace: &Path) -> bool {
    let file = workspace.join(super::cheater::REPORT);
    crate::fsio::read_regular(&file, 1 << 20)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| {
            v.get("reached")
                .and_then(Value::as_array)
                .map(|a| !a.is_empty())
        })
        .unwrap_or(true)
}

/// Runs the arm's investigator on the open run: the in-process ones directly, the others as
/// a script or a process agent.
fn investigate(
    scenario: &Prepared,
    arm: Arm,
    run: &RunHandle,
    ctx: &TrialContext,
) -> Result<Investigation, TrialError> {
    let in_process = |r: Result<(u32, Option<String>), CaseError>| match r {
        Ok((actions, reason)) => Ok(Investigation {
            turns: actions,
            reason,
            ..Investigation::default()
        }),
        Err(e) => Err(infra("the in-process investigator failed", e)),
    };
    match arm {
        Arm::Baseline => in_process(crate::fsio::relaxed(|| {
            crate::investigator::baseline::run(run).map(|c| (c.actions, c.reason))
        })),
        Arm::Heuristic => in_process(crate::fsio::relaxed(|| {
            crate::investigator::heuristic::run(run).map(|c| (c.actions, c.reason))
        })),
        Arm::Oracle => {
            let label = ctx
                .vault
                .answer_told_to(arm, &scenario.id)
                .map_err(|e| TrialError::Fatal(e.to_string()))?;
            in_process(crate::fsio::relaxed(|| {
                super::oracle::run(run, &label).map(|o| (o.actions, o.reason))
            }))
        }
        Arm::Overclaim => {
            let label = ctx
                .vault
                .answer_told_to(arm, &scenario.id)
                .map_err(|e| TrialError::Fatal(e.to_string()))?;
            let right = label.expect.values.values().find_map(|v| v.equals.clone());
            in_process(crate::fsio::relaxed(|| {
                crate::investigator::overclaim::run(run, right.as_ref())
                    .map(|c| (c.actions, c.reason))
            }))
        }
        Arm::Scripted => scripted(run, ctx),
        Arm::CheaterReach | Arm::CheaterHanded => cheater(scenario, arm, run, ctx),
        Arm::Command => {
            let Some((program, args)) = ctx.driver.command.split_first() else {
                return Err(TrialError::Fatal(
                    "the command investigator needs --command PROG [ARGS...]".into(),
                ));
            };
            let driver = CommandDriver {
                program: program.clone(),
                args: args.to_vec(),
            };
            process(&driver, run, ctx.driver, ctx)
        }
        Arm::ClaudeCode => {
            let driver = ClaudeCodeDriver {
                tools: ctx.driver.claude_tools,
            };
            process(&driver, run, ctx.driver, ctx)
        }
        Arm::Codex => {
            let codex = CodexDriver {
                tools: ctx.driver.claude_tools,
            };
            process(&codex, run, ctx.driver, ctx)
        }
    }
}

/// Plays the `--script` file on the run; a script that stops early is the investigation's
/// answer, with why it stopped as the reason.
fn scripted(run: &RunHandle, ctx: &TrialContext) -> Result<Investigation, TrialError> {
    let script =
        ctx.driver.script.as_ref().ok_or_else(|| {
            TrialError::Fatal("the scripted investigator needs --script FILE".into())
        })?;
    let doc = Arc::clone(&script.doc);
    let name = script.path.display().to_string();
    let driver = ScriptedAgentDriver::new(&name, move |agent| doc.play(agent));
    // A script that stops early is an answer (scored), not an infrastructure failure.
    let r = crate::fsio::relaxed(|| driver.run(run));
    Ok(Investigation {
        reason: r.err().map(|e| format!("the script stopped: {e}")),
        ..Investigation::default()
    })
}

/// Runs the engine's `battery-cheater` as a process agent, natively and with nothing
/// hidden; the handed cheater is also given the scenario's canary.
fn cheater(
    scenario: &Prepared,
    arm: Arm,
    run: &RunHandle,
    ctx: &TrialContext,
) -> Result<Investigation, TrialError> {
    let mut args = vec!["battery-cheater".to_string()];
    if arm == Arm::CheaterHanded {
        let canary = ctx
            .vault
            .canary_for_cheater(&scenario.id)
            .map_err(|e| TrialError::Fatal(e.to_string()))?;
        args.extend(["--canary".to_string(), canary]);
    }
    let driver = CommandDriver {
        program: ctx.driver.engine.display().to_string(),
        args,
    };
    // The cheater tests the detector, not the sandbox: it runs natively, where
    // everything the evaluator left on the machine is within its reach.
    let mut cfg = ctx.driver.clone();
    cfg.backend = crate::sandbox::Backend::Native {
        allow_degraded_native: true,
    };
    cfg.hidden.clear();
    process(&driver, run, &cfg, ctx)
}

/// Runs a process agent and accounts for it; a failure of the agent's own machinery with
/// nothing finalized is an infrastructure failure.
fn process(
    driver: &dyn AgentDriver,
    run: &RunHandle,
    cfg: &DriverConfig,
    ctx: &TrialContext,
) -> Result<Investigation, TrialError> {
    let mut ambient = crate::driver::env::ambient();
    for (k, v) in &cfg.env {
        ambient.retain(|(name, _)| name != k);
        ambient.push((k.clone(), v.clone()));
    }
    let policy = ExecutionPolicy {
        backend: cfg.backend,
        timeout: cfg.timeout,
        max_turns: cfg.max_turns,
        max_budget_usd: ctx.budget_usd,
        model: cfg.model.clone(),
        hidden: cfg.hidden.clone(),
        ambient,
        engine: cfg.engine.clone(),
    };
    let report = driver
        .drive(run, &policy, ctx.cancel, &mut |_| {})
        .map_err(|e| infra("the driver failed", e))?;
    let finalized = ended(report.state);
    let u = &report.usage;
    let inv = Investigation {
        tokens_in: u.input_tokens.unwrap_or(0)
            + u.cache_creation_input_tokens.unwrap_or(0)
            + u.cache_read_input_tokens.unwrap_or(0),
        tokens_out: u.output_tokens.unwrap_or(0),
        cost_usd: if cfg.priced {
            u.total_cost_usd.unwrap_or(0.0)
        } else {
            0.0
        },
        turns: u.num_turns.unwrap_or(0) as u32,
        reason: report.failure.clone(),
        process_ms: report.process_ms,
    };
    if report.violation.is_some() {
        // The agent changed the repository: an answer (scored, and the run says why), not
        // an infrastructure failure to retry.
        return Ok(inv);
    }
    match report.outcome {
        Outcome::Completed => Ok(inv),
        _ if finalized => Ok(inv),
        other => Err(TrialError::Infra(format!(
            "{} {:?} without finalizing: {}",
            driver.name(),
            other,
            report.failure.unwrap_or_else(|| "no detail".into())
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace holding `report` as the reaching cheater's account (or none).
    fn workspace_with(report: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = report {
            std::fs::write(dir.path().join(super::super::cheater::REPORT), text).unwrap();
        }
        dir
    }

    /// Regression: a cheater that left no readable account must count as having reached the
    /// labels (the negative control then needs a flag), never as contained.
    #[test]
    fn a_cheater_without_a_readable_account_counts_as_having_reached() {
        for (report, reached) in [
            (None, true),
            (Some("not json"), true),
            (Some(r#"{"other": 1}"#), true),
            (Some(r#"{"reached": ["labels/a.json"]}"#), true),
            (Some(r#"{"reached": []}"#), false),
        ] {
            let dir = workspace_with(report);
            assert_eq!(cheater_reached(dir.path()), reached, "report {report:?}");
        }
    }
}
