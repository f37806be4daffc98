//! The battery runner: resolves the corpus and the labels, plans the trials, runs them on
//! `jobs` workers with retries, a budget and cancellation, writes each trial's record as it
//! ends, and assembles results.json. It emits [`Event`]s; it formats no text.
//!
//! Invariant: nothing is scored from a trial that did not end; a trial record on disk is
//! whole (atomic rename) and final, so `--resume` keeps it and reruns only what is missing
//! (R-BAT-12); the label seal is taken before the first trial and re-taken after the last
//! (R-BAT-5); the labels are refused when a trial could reach them (R-BAT-1).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use super::arm::Arm;
use super::corpus::{Scenario, load_scenarios};
use super::plan::{Partition, Planned, Selector, plan};
use super::results::{
    FORMAT_VERSION, Host, Infra, MANIFEST_JSON, Manifest, NotRun, RESULTS_FORMAT, RESULTS_JSON,
    ResultsDoc, Selection, TRIAL_FORMAT, TRIALS_DIR, TrialRecord, read_versioned, trial_file_name,
    trial_id,
};
use super::summary::{controls, summarize};
use super::trial::{self, DriverConfig, Prepared, TrialContext, TrialError};
use super::vault::Vault;
use super::workspace;
use crate::process::CancelHandle;

/// Everything a battery run needs, resolved.
#[derive(Debug, Clone)]
pub struct Config {
    pub scenarios: PathBuf,
    pub labels: PathBuf,
    /// The arm measured against the baseline.
    pub investigator: Arm,
    /// Run the oracle and both cheaters beside the arms.
    pub controls: bool,
    pub repeats: u32,
    pub jobs: usize,
    pub selector: Selector,
    pub partition: Option<Partition>,
    pub out: PathBuf,
    /// Continue the battery in `out`.
    pub resume: bool,
    pub seed: u64,
    pub retries: u32,
    pub max_infra_failures: usize,
    pub max_budget_usd: Option<f64>,
    pub driver: DriverConfig,
    /// The investigator's version (`claude --version`, or anvil-bench's own).
    pub investigator_version: String,
    /// Where its model is reached (`replay:heuristic`, a URL, `none`).
    pub endpoint: String,
}

impl Config {
    /// Baseline, the investigator, then the controls.
    pub fn arms(&self) -> Vec<Arm> {
        let mut arms = vec![Arm::Baseline];
        if self.investigator != Arm::Baseline {
            arms.push(self.investigator);
        }
        if self.controls {
            for c in [Arm::Oracle, Arm::CheaterReach, Arm::CheaterHanded] {
                if !arms.contains(&c) {
                    arms.push(c);
                }
            }
        }
        arms
    }
}

/// What the runner reports as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    Note(String),
    Planned {
        total: usize,
        already_done: usize,
        scenarios: usize,
        arms: &'a [Arm],
        repeats: u32,
        jobs: usize,
    },
    Retrying {
        id: &'a str,
        attempt: u32,
        error: &'a str,
    },
    Finished {
        record: &'a TrialRecord,
        done: usize,
        total: usize,
        cost_usd: f64,
        infra: usize,
    },
}

/// How the battery ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Completed,
    ControlsFailed,
    LabelsChanged,
    Nondeterministic,
    InfraLimit,
    Cancelled,
}

#[derive(Debug)]
pub struct Outcome {
    pub results: ResultsDoc,
    pub dir: PathBuf,
    pub verdict: Verdict,
}

#[derive(Debug, thiserror::Error)]
pub enum BatteryError {
    /// Bad input: the corpus, the labels, the flags, a results directory.
    #[error("{0}")]
    Input(String),
    /// A manifest that differs from the one being resumed or merged.
    #[error("{0}")]
    Incompatible(String),
    #[error("{0}")]
    Fatal(String),
}

fn canonical(p: &Path) -> Result<PathBuf, BatteryError> {
    std::fs::canonicalize(p).map_err(|e| BatteryError::Input(format!("`{}`: {e}", p.display())))
}

/// R-BAT-1: the labels are reachable from no trial. Trials see only their own copy of a
/// scenario repository (symlinks refused), so the labels must not lie inside the corpus,
/// nor the corpus or the results inside the labels.
pub fn check_labels_unreachable(
    scenarios: &Path,
    labels: &Path,
    out: &Path,
) -> Result<(), BatteryError> {
    let s = canonical(scenarios)?;
    let l = canonical(labels)?;
    if l.starts_with(&s) {
        return Err(BatteryError::Input(format!(
            "the labels directory `{}` is inside the scenarios directory `{}`: a trial's repository copy could reach it; keep the labels outside the corpus",
            l.display(),
            s.display()
        )));
    }
    if s.starts_with(&l) {
        return Err(BatteryError::Input(format!(
            "the scenarios directory `{}` is inside the labels directory `{}`",
            s.display(),
            l.display()
        )));
    }
    // The results directory usually does not exist yet: resolve what does.
    let o = canonical_lenient(out);
    if o.starts_with(&l) || l.starts_with(&o) {
        return Err(BatteryError::Input(format!(
            "the results directory `{}` and the labels directory `{}` overlap: kept runs would sit beside the answer key",
            o.display(),
            l.display()
        )));
    }
    Ok(())
}

/// `p` resolved through its nearest existing ancestor (symlinks and `..` included), the
/// rest appended as written.
fn canonical_lenient(p: &Path) -> PathBuf {
    let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    for anc in p.ancestors() {
        if let Ok(c) = std::fs::canonicalize(anc) {
            return c.join(p.strip_prefix(anc).unwrap_or(Path::new("")));
        }
    }
    p
}

/// sha256 over every file of the corpus (relative paths and bytes).
pub fn corpus_digest(scenarios: &Path) -> Result<String, BatteryError> {
    workspace::tree_digest(scenarios).map_err(|e| BatteryError::Input(e.to_string()))
}

fn skill_policy_hashes() -> BTreeMap<String, String> {
    let reg = crate::skill::registry();
    reg.skills
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                crate::case::doc::CasePolicy::build(s, reg.default_scopes.clone()).hash(),
            )
        })
        .collect()
}

/// The manifest of a run of `cfg` on a corpus with `digest` and labels with `seal`.
pub fn manifest(cfg: &Config, digest: String, seal: String, git: bool) -> Manifest {
    Manifest {
        anvil_bench_version: env!("CARGO_PKG_VERSION").into(),
        anvil_bench_revision: option_env!("ANVIL_BENCH_REVISION").map(str::to_string),
        corpus_digest: digest,
        label_seal: seal,
        investigator: super::results::Investigator {
            arm: cfg.investigator,
            version: cfg.investigator_version.clone(),
            model: cfg.driver.model.clone(),
            endpoint: cfg.endpoint.clone(),
            backend: if cfg.investigator.spawns() {
                match cfg.driver.backend {
                    crate::sandbox::Backend::Bubblewrap => "bubblewrap".into(),
                    crate::sandbox::Backend::Native { .. } => "native".into(),
                }
            } else {
                "in_process".into()
            },
        },
        arms: cfg.arms(),
        brief_template_hash: crate::canon::bytes_hash(include_bytes!("../case/views.rs")),
        skill_policy_hashes: skill_policy_hashes(),
        tool_limits: serde_json::to_value(crate::tools::ToolLimits::default()).unwrap_or_default(),
        repeats: cfg.repeats,
        seed: cfg.seed,
        selection: Selection {
            classes: cfg.selector.classes.clone(),
            scenarios: cfg.selector.globs.clone(),
            limit: cfg.selector.limit,
        },
        trial_timeout_secs: cfg.driver.timeout.as_secs(),
        max_turns: cfg.driver.max_turns,
        max_budget_usd: cfg.max_budget_usd,
        retries: cfg.retries,
        git_commits: git,
        jobs: cfg.jobs,
        partition: cfg.partition.map(|p| p.to_string()),
        host: Host {
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        },
        started_at: crate::case::lifecycle::now(),
        ended_at: None,
    }
}

/// Loads the finished trial records under `dir/trials/` (a leftover temp file from a kill is
/// swept; a record that does not parse is an error naming it).
pub fn load_trials(dir: &Path) -> Result<Vec<TrialRecord>, BatteryError> {
    let trials = dir.join(TRIALS_DIR);
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&trials) else {
        return Ok(out);
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') && name.contains(".tmp-") {
            let _ = std::fs::remove_file(&p);
            continue;
        }
        let rec: TrialRecord =
            read_versioned(&p, TRIAL_FORMAT).map_err(|e| BatteryError::Input(e.to_string()))?;
        if trial_file_name(&rec.id) != name {
            return Err(BatteryError::Input(format!(
                "`{}`: holds trial `{}`, whose record belongs in `{}`",
                p.display(),
                rec.id,
                trial_file_name(&rec.id)
            )));
        }
        out.push(rec);
    }
    Ok(out)
}

/// Deterministic arms whose repeats disagree (R-BAT-10): `<scenario>::<arm>`.
pub fn nondeterministic(trials: &[TrialRecord]) -> Vec<String> {
    /// What must agree across repeats: status, correctness, tier and the patch (as
    /// canonical JSON): two different wrong values are two outcomes.
    type Outcome = (Option<String>, bool, Option<String>, Option<String>);
    let mut outcomes: BTreeMap<(String, Arm), BTreeSet<Outcome>> = BTreeMap::new();
    for t in trials
        .iter()
        .filter(|t| t.counted() && t.arm.deterministic())
    {
        outcomes
            .entry((t.scenario.clone(), t.arm))
            .or_default()
            .insert((
                t.status.clone(),
                t.correct,
                t.tier.clone(),
                t.patch.as_ref().map(crate::canon::canonical_json),
            ));
    }
    outcomes
        .into_iter()
        .filter(|(_, o)| o.len() > 1)
        .map(|((s, a), _)| format!("{s}::{a}"))
        .collect()
}

/// Sorts trial records the one way results.json lists them.
pub fn sort_trials(trials: &mut [TrialRecord], arms: &[Arm]) {
    let pos = |a: Arm| arms.iter().position(|x| *x == a).unwrap_or(usize::MAX);
    trials.sort_by(|a, b| {
        (&a.scenario, pos(a.arm), a.arm, a.repeat).cmp(&(&b.scenario, pos(b.arm), b.arm, b.repeat))
    });
}

/// Assembles results.json from trial records (also used by merge).
pub fn assemble(
    manifest: Manifest,
    mut trials: Vec<TrialRecord>,
    not_run: Vec<NotRun>,
    label_seal_after: String,
    complete: bool,
) -> ResultsDoc {
    sort_trials(&mut trials, &manifest.arms);
    let (classes, overall) = summarize(
        &trials,
        &manifest.arms,
        manifest.investigator.arm,
        manifest.seed,
    );
    let controls = controls(&trials, &manifest.arms);
    ResultsDoc {
        format: RESULTS_FORMAT.into(),
        format_version: FORMAT_VERSION,
        nondeterministic: nondeterministic(&trials),
        manifest,
        trials,
        not_run,
        classes,
        overall,
        controls,
        label_seal_after,
        complete,
    }
}

/// The verdict of a finished results document.
pub fn verdict(doc: &ResultsDoc, cancelled: bool, infra_limit: bool) -> Verdict {
    if doc.label_seal_after != doc.manifest.label_seal {
        Verdict::LabelsChanged
    } else if infra_limit {
        Verdict::InfraLimit
    } else if cancelled {
        Verdict::Cancelled
    } else if !doc.controls.passed() {
        Verdict::ControlsFailed
    } else if !doc.nondeterministic.is_empty() {
        Verdict::Nondeterministic
    } else {
        Verdict::Completed
    }
}

/// The battery's spend against `--max-budget-usd` (R-BAT-15). A cost-bearing trial is
/// admitted only while the spend so far plus a mean trial's cost stays within the budget,
/// and it is given a share of the unreserved remainder as its own cap (the agent's
/// `--max-budget-usd`), so trials running at once can never together reserve more than
/// what is left: the budget is passed by at most what one agent overruns its own cap.
#[derive(Debug, Clone, Default)]
pub struct Budget {
    pub max: Option<f64>,
    /// Trials that may run at once.
    pub slots: usize,
    pub spent: f64,
    /// Caps handed to running trials and not yet settled.
    pub reserved: f64,
    pub finished: usize,
}

/// Whether a cost-bearing trial may start, and the most it may spend.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admit {
    Go(Option<f64>),
    Stop,
}

impl Budget {
    pub fn new(max: Option<f64>, slots: usize) -> Budget {
        Budget {
            max,
            slots: slots.max(1),
            ..Budget::default()
        }
    }

    fn mean(&self) -> f64 {
        if self.finished > 0 {
            self.spent / self.finished as f64
        } else {
            0.0
        }
    }

    /// Admits a trial with `running` trials already admitted and not settled.
    pub fn admit(&mut self, running: usize) -> Admit {
        let Some(max) = self.max else {
            return Admit::Go(None);
        };
        let free = max - self.spent - self.reserved;
        if free <= 0.0 || self.spent + self.mean() > max {
            return Admit::Stop;
        }
        let cap = free / self.slots.saturating_sub(running).max(1) as f64;
        self.reserved += cap;
        Admit::Go(Some(cap))
    }

    /// A trial admitted with `cap` ended having spent `cost`.
    pub fn settle(&mut self, cap: Option<f64>, cost: f64) {
        self.reserved = (self.reserved - cap.unwrap_or(0.0)).max(0.0);
        self.finished += 1;
        self.spent += cost;
    }
}

struct Shared {
    queue: VecDeque<Planned>,
    budget: Budget,
    running_model: usize,
    not_run: Vec<NotRun>,
    infra: usize,
    stop: Option<&'static str>,
}

/// Runs the battery.
pub fn run(
    cfg: &Config,
    cancel: &CancelHandle,
    events: &mut (dyn FnMut(Event) + Send),
) -> Result<Outcome, BatteryError> {
    // The corpus and the labels.
    let (scenarios, problems) = load_scenarios(&cfg.scenarios);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        return Err(BatteryError::Input(format!(
            "the corpus at `{}` has problems (see `anvil-bench scenarios check`):\n{}",
            cfg.scenarios.display(),
            list.join("\n")
        )));
    }
    if scenarios.is_empty() {
        return Err(BatteryError::Input(format!(
            "no scenario under `{}` (expected <class>/<name>/scenario.json)",
            cfg.scenarios.display()
        )));
    }
    check_labels_unreachable(&cfg.scenarios, &cfg.labels, &cfg.out)?;
    let vault = Vault::open(&cfg.labels).map_err(|e| BatteryError::Input(e.to_string()))?;
    let ids: Vec<(String, String)> = scenarios
        .iter()
        .map(|s| (s.dir_id.clone(), s.doc.class.to_string()))
        .collect();
    let selected = cfg.selector.select(&ids).map_err(BatteryError::Input)?;
    let selected: Vec<&str> = selected
        .iter()
        .map(|(id, _)| id.as_str())
        .filter(|id| cfg.partition.is_none_or(|p| p.takes(id)))
        .collect();
    for id in &selected {
        if !vault.has(id) {
            return Err(BatteryError::Input(format!(
                "scenario `{id}` has no label under `{}`",
                cfg.labels.display()
            )));
        }
    }
    let git = workspace::git_available();
    if !git {
        events(Event::Note(
            "git not found: trials run on uncommitted copies (source revision `none`); install it with `apt-get install git`".into(),
        ));
    }
    let arms = cfg.arms();
    let digest = corpus_digest(&cfg.scenarios)?;
    let mut manifest = manifest(cfg, digest, vault.seal().to_string(), git);

    // The results directory: new, or resumed with the same manifest.
    let mut done: Vec<TrialRecord> = Vec::new();
    let manifest_file = cfg.out.join(MANIFEST_JSON);
    if cfg.resume {
        let old: Manifest = read_manifest(&manifest_file)?;
        if let Some((field, a, b)) = old.differences(&manifest, &[]).into_iter().next() {
            return Err(BatteryError::Incompatible(format!(
                "cannot resume `{}`: the manifest field `{field}` was {a} and is now {b}",
                cfg.out.display()
            )));
        }
        manifest.started_at = old.started_at;
        done = load_trials(&cfg.out)?;
    } else {
        if cfg.out.exists() && std::fs::read_dir(&cfg.out).map_or(true, |mut d| d.next().is_some())
        {
            return Err(BatteryError::Input(format!(
                "`{}` is not empty: name a new --out directory, or continue it with --resume {}",
                cfg.out.display(),
                cfg.out.display()
            )));
        }
        std::fs::create_dir_all(cfg.out.join(TRIALS_DIR))
            .map_err(|e| BatteryError::Input(format!("`{}`: {e}", cfg.out.display())))?;
        write_manifest(&manifest_file, &manifest)?;
    }

    let planned = plan(&selected, &arms, cfg.repeats);
    let done_ids: BTreeSet<String> = done.iter().map(|t| t.id.clone()).collect();
    let todo: VecDeque<Planned> = planned
        .iter()
        .filter(|p| !done_ids.contains(&trial_id(&p.scenario, p.arm, p.repeat)))
        .cloned()
        .collect();
    events(Event::Planned {
        total: planned.len(),
        already_done: planned.len() - todo.len(),
        scenarios: selected.len(),
        arms: &arms,
        repeats: cfg.repeats,
        jobs: cfg.jobs,
    });

    // Prepare each scenario's starting state once, at a neutral path.
    let work_root = std::env::temp_dir().join(format!(
        "anvil-{}",
        ulid::Ulid::new().to_string().to_lowercase()
    ));
    let needed: BTreeSet<&str> = todo.iter().map(|p| p.scenario.as_str()).collect();
    let wanted: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| needed.contains(s.dir_id.as_str()))
        .collect();
    // Templates are prepared on the battery's jobs: each is a copy and four git calls, and
    // one after another they were a second of wall time with one core idle.
    let templates = crate::par::in_order(&wanted, cfg.jobs.max(1), |s, _| {
        Prepared::new(s, &work_root, git).map_err(|e| format!("scenario `{}`: {e}", s.dir_id))
    });
    let mut prepared: BTreeMap<String, Arc<Prepared>> = BTreeMap::new();
    for template in templates {
        // `in_order` leaves items after a failure undone; the failure comes first.
        let Some(Ok(p)) = template else {
            let _ = std::fs::remove_dir_all(&work_root);
            return Err(BatteryError::Input(match template {
                Some(Err(e)) => e,
                _ => "a scenario template was not prepared".into(),
            }));
        };
        prepared.insert(p.id.clone(), Arc::new(p));
    }

    let result = execute(
        cfg,
        &vault,
        &prepared,
        todo,
        &work_root,
        cancel,
        planned.len(),
        done.len(),
        events,
    );
    let _ = std::fs::remove_dir_all(&work_root);
    let (new, not_run, infra_limit, fatal) = result;
    done.extend(new);
    let cancelled = cancel.is_cancelled();
    let seal_after = vault
        .reseal()
        .unwrap_or_else(|e| format!("unreadable: {e}"));
    manifest.ended_at = Some(crate::case::lifecycle::now());
    let complete = not_run.is_empty() && fatal.is_none() && done.len() == planned.len();
    let doc = assemble(manifest, done, not_run, seal_after, complete);
    crate::fsio::write_json_atomic(&cfg.out.join(RESULTS_JSON), &doc)
        .map_err(|e| BatteryError::Fatal(format!("writing results.json: {e}")))?;
    if let Some(f) = fatal {
        return Err(BatteryError::Fatal(format!(
            "{f}\nthe trials that finished are kept; continue with --resume {}",
            cfg.out.display()
        )));
    }
    let verdict = verdict(&doc, cancelled, infra_limit);
    Ok(Outcome {
        results: doc,
        dir: cfg.out.clone(),
        verdict,
    })
}

/// Reads a results directory's `manifest.json`.
pub fn read_manifest(file: &Path) -> Result<Manifest, BatteryError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Doc {
        #[allow(dead_code)]
        format: String,
        #[allow(dead_code)]
        format_version: u32,
        manifest: Manifest,
    }
    let doc: Doc = read_versioned(file, "anvil-battery-manifest")
        .map_err(|e| BatteryError::Input(format!("{e} (is this a battery results directory?)")))?;
    Ok(doc.manifest)
}

fn write_manifest(file: &Path, m: &Manifest) -> Result<(), BatteryError> {
    let doc = serde_json::json!({"format": "anvil-battery-manifest", "formatVersion": FORMAT_VERSION, "manifest": m});
    crate::fsio::write_json_atomic(file, &doc)
        .map_err(|e| BatteryError::Fatal(format!("writing `{}`: {e}", file.display())))
}

type Executed = (Vec<TrialRecord>, Vec<NotRun>, bool, Option<String>);

enum Msg {
    Retry(String, u32, String),
    Done(Box<TrialRecord>),
    Fatal(String),
}

#[allow(clippy::too_many_arguments)]
fn execute(
    cfg: &Config,
    vault: &Vault,
    prepared: &BTreeMap<String, Arc<Prepared>>,
    todo: VecDeque<Planned>,
    work_root: &Path,
    cancel: &CancelHandle,
    total: usize,
    already: usize,
    events: &mut (dyn FnMut(Event) + Send),
) -> Executed {
    let shared = Mutex::new(Shared {
        queue: todo,
        budget: Budget::new(cfg.max_budget_usd, cfg.jobs),
        running_model: 0,
        not_run: Vec::new(),
        infra: 0,
        stop: None,
    });
    let stop_now = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Msg>();
    let trials_dir = cfg.out.join(TRIALS_DIR);
    let mut finished = Vec::new();
    let mut fatal = None;
    std::thread::scope(|scope| {
        for _ in 0..cfg.jobs.max(1) {
            let tx = tx.clone();
            let shared = &shared;
            let stop_now = &stop_now;
            let trials_dir = &trials_dir;
            scope.spawn(move || {
                loop {
                    let (next, budget) = {
                        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                        if cancel.is_cancelled()
                            || stop_now.load(Ordering::SeqCst)
                            || s.stop.is_some()
                        {
                            break;
                        }
                        let Some(next) = s.queue.pop_front() else {
                            break;
                        };
                        let budget = if next.arm.uses_model() {
                            let running = s.running_model;
                            match s.budget.admit(running) {
                                Admit::Go(cap) => {
                                    s.running_model += 1;
                                    cap
                                }
                                Admit::Stop => {
                                    s.not_run.push(NotRun {
                                        id: trial_id(&next.scenario, next.arm, next.repeat),
                                        reason: "budget".into(),
                                    });
                                    continue;
                                }
                            }
                        } else {
                            None
                        };
                        (next, budget)
                    };
                    let scenario = &prepared[&next.scenario];
                    let id = trial_id(&next.scenario, next.arm, next.repeat);
                    let ctx = TrialContext {
                        vault,
                        driver: &cfg.driver,
                        work_root,
                        out_dir: &cfg.out,
                        budget_usd: budget,
                        cancel,
                    };
                    let mut attempt = 1;
                    let record = loop {
                        match trial::run(scenario, next.arm, next.repeat, &ctx) {
                            Ok(mut r) => {
                                r.attempts = attempt;
                                break Ok(r);
                            }
                            Err(TrialError::Infra(e))
                                if attempt <= cfg.retries && !cancel.is_cancelled() =>
                            {
                                let _ = tx.send(Msg::Retry(id.clone(), attempt, e));
                                attempt += 1;
                            }
                            Err(TrialError::Infra(e)) => {
                                break Ok(infra_record(
                                    scenario,
                                    next.arm,
                                    next.repeat,
                                    e,
                                    attempt,
                                ));
                            }
                            Err(TrialError::Fatal(e)) => break Err(e),
                        }
                    };
                    {
                        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                        let cost = record.as_ref().map_or(0.0, |r| r.cost_usd);
                        if next.arm.uses_model() {
                            s.running_model -= 1;
                            s.budget.settle(budget, cost);
                        }
                        match &record {
                            Ok(r) => {
                                if r.infra.is_some() {
                                    s.infra += 1;
                                    if s.infra > cfg.max_infra_failures {
                                        s.stop = Some("infra_limit");
                                    }
                                }
                            }
                            Err(_) => s.stop = Some("fatal"),
                        }
                    }
                    let msg = match record {
                        Ok(r) if cancel.is_cancelled() && r.infra.is_some() => {
                            // Killed by the cancel, not by its infrastructure: not a result.
                            let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                            s.not_run.push(NotRun {
                                id: r.id.clone(),
                                reason: "cancelled".into(),
                            });
                            continue;
                        }
                        Ok(r) => match crate::fsio::write_json_atomic(
                            &trials_dir.join(trial_file_name(&r.id)),
                            &r,
                        ) {
                            Ok(()) => Msg::Done(Box::new(r)),
                            Err(e) => Msg::Fatal(format!("writing the record of `{}`: {e}", r.id)),
                        },
                        Err(e) => Msg::Fatal(e),
                    };
                    if matches!(msg, Msg::Fatal(_)) {
                        stop_now.store(true, Ordering::SeqCst);
                    }
                    let _ = tx.send(msg);
                }
            });
        }
        drop(tx);
        let mut cost = 0.0;
        let mut infra = 0;
        for msg in rx {
            match msg {
                Msg::Retry(id, attempt, error) => events(Event::Retrying {
                    id: &id,
                    attempt,
                    error: &error,
                }),
                Msg::Done(r) => {
                    cost += r.cost_usd;
                    infra += usize::from(r.infra.is_some());
                    finished.push(*r);
                    events(Event::Finished {
                        record: finished.last().expect("just pushed"),
                        done: already + finished.len(),
                        total,
                        cost_usd: cost,
                        infra,
                    });
                }
                Msg::Fatal(e) => {
                    fatal.get_or_insert(e);
                }
            }
        }
    });
    let s = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut not_run = s.not_run;
    let reason = if cancel.is_cancelled() {
        "cancelled"
    } else {
        s.stop.unwrap_or("cancelled")
    };
    not_run.extend(s.queue.into_iter().map(|p| NotRun {
        id: trial_id(&p.scenario, p.arm, p.repeat),
        reason: reason.into(),
    }));
    not_run.sort_by(|a, b| a.id.cmp(&b.id));
    (finished, not_run, s.stop == Some("infra_limit"), fatal)
}

fn infra_record(
    scenario: &Prepared,
    arm: Arm,
    repeat: u32,
    error: String,
    attempts: u32,
) -> TrialRecord {
    TrialRecord {
        format: TRIAL_FORMAT.into(),
        format_version: FORMAT_VERSION,
        id: trial_id(&scenario.id, arm, repeat),
        scenario: scenario.id.clone(),
        class: scenario.class.clone(),
        skill: scenario.skill.clone(),
        arm,
        repeat,
        status: None,
        expected_status: None,
        expected: None,
        tier: None,
        patch: None,
        reason: None,
        status_correct: false,
        values_correct: false,
        correct: false,
        grounded: false,
        evidence_recall: None,
        claims: 0,
        unsupported_claims: 0,
        harmful: false,
        harmful_at_auto: false,
        contaminated: false,
        contamination: vec![],
        reached_labels: None,
        infra: Some(Infra { error, attempts }),
        attempts,
        tokens_in: 0,
        tokens_out: 0,
        cost_usd: 0.0,
        turns: 0,
        wall_ms: 0,
        start_digest: scenario.template.digest.clone(),
        run: None,
    }
}
