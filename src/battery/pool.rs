//! The trial pool: `jobs` workers take the planned trials in order, a cost-bearing one only
//! when the [`Budget`] admits it, retry a trial on an infrastructure failure, and write each
//! trial's record the moment it ends; the calling thread hears of each and emits the
//! [`Event`]s.
//!
//! Invariant: a record is written whole before it is reported, and a trial the cancel
//! killed is recorded as not run, never as a result.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use super::arm::Arm;
use super::config::{Config, Event};
use super::plan::Planned;
use super::results::{
    FORMAT_VERSION, Infra, NotRun, TRIAL_FORMAT, TRIALS_DIR, TrialRecord, trial_file_name, trial_id,
};
use super::trial::{self, Prepared, TrialContext, TrialError};
use super::vault::Vault;
use crate::process::CancelHandle;

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
    #[must_use]
    pub fn new(max: Option<f64>, slots: usize) -> Budget {
        Budget {
            max,
            slots: slots.max(1),
            ..Budget::default()
        }
    }

    fn mean(&self) -> f64 {
        if self.finished > 0 {
            self.spent / super::stats::from_count(self.finished)
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
        let cap = free / super::stats::from_count(self.slots.saturating_sub(running).max(1));
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

pub(crate) type Executed = (Vec<TrialRecord>, Vec<NotRun>, bool, Option<String>);

enum Msg {
    Retry(String, u32, String),
    Done(Box<TrialRecord>),
    Fatal(String),
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn execute(
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
    let worker = Worker {
        cfg,
        vault,
        prepared,
        work_root,
        cancel,
        shared: &shared,
        stop_now: &stop_now,
        trials_dir: &trials_dir,
    };
    std::thread::scope(|scope| {
        for _ in 0..cfg.jobs.max(1) {
            let tx = tx.clone();
            let worker = &worker;
            scope.spawn(move || worker.work(&tx));
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
    let s = shared
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
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

/// What every worker of [`execute`] shares: the configuration, the prepared scenarios,
/// the queue and budget (under one lock), and the stop flag a fatal error raises.
struct Worker<'a> {
    cfg: &'a Config,
    vault: &'a Vault,
    prepared: &'a BTreeMap<String, Arc<Prepared>>,
    work_root: &'a Path,
    cancel: &'a CancelHandle,
    shared: &'a Mutex<Shared>,
    stop_now: &'a AtomicBool,
    trials_dir: &'a Path,
}

impl Worker<'_> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs trials until the queue is empty, the battery is cancelled, or it must stop.
    fn work(&self, tx: &mpsc::Sender<Msg>) {
        while let Some((next, budget)) = self.take() {
            let record = self.run_with_retries(&next, budget, tx);
            self.settle(&next, budget, &record);
            let Some(msg) = self.deliver(record) else {
                continue;
            };
            if matches!(msg, Msg::Fatal(_)) {
                self.stop_now.store(true, Ordering::SeqCst);
            }
            let _ = tx.send(msg);
        }
    }

    /// The next trial and its budget cap; a model trial the budget cannot admit is recorded
    /// as not run and the next one taken. `None`: nothing more to run.
    fn take(&self) -> Option<(Planned, Option<f64>)> {
        loop {
            let mut s = self.lock();
            if self.cancel.is_cancelled()
                || self.stop_now.load(Ordering::SeqCst)
                || s.stop.is_some()
            {
                return None;
            }
            let next = s.queue.pop_front()?;
            if !next.arm.uses_model() {
                return Some((next, None));
            }
            let running = s.running_model;
            match s.budget.admit(running) {
                Admit::Go(cap) => {
                    s.running_model += 1;
                    return Some((next, cap));
                }
                Admit::Stop => {
                    s.not_run.push(NotRun {
                        id: trial_id(&next.scenario, next.arm, next.repeat),
                        reason: "budget".into(),
                    });
                }
            }
        }
    }

    /// One trial, retried on an infrastructure failure up to `retries` times (each retry
    /// announced); after the last, an infra record. `Err`: a fatal error.
    fn run_with_retries(
        &self,
        next: &Planned,
        budget: Option<f64>,
        tx: &mpsc::Sender<Msg>,
    ) -> Result<TrialRecord, String> {
        let cfg = self.cfg;
        let cancel = self.cancel;
        let scenario = &self.prepared[&next.scenario];
        let id = trial_id(&next.scenario, next.arm, next.repeat);
        let ctx = TrialContext {
            vault: self.vault,
            driver: &cfg.driver,
            work_root: self.work_root,
            out_dir: &cfg.out,
            budget_usd: budget,
            cancel,
        };
        let mut attempt = 1;
        loop {
            match trial::run(scenario, next.arm, next.repeat, &ctx) {
                Ok(mut r) => {
                    r.attempts = attempt;
                    break Ok(r);
                }
                Err(TrialError::Infra(e)) if attempt <= cfg.retries && !cancel.is_cancelled() => {
                    let _ = tx.send(Msg::Retry(id.clone(), attempt, e));
                    attempt += 1;
                }
                Err(TrialError::Infra(e)) => {
                    break Ok(infra_record(scenario, next.arm, next.repeat, e, attempt));
                }
                Err(TrialError::Fatal(e)) => break Err(e),
            }
        }
    }

    /// Returns the trial's budget reservation and counts an infra failure (stopping the
    /// battery past the limit) or a fatal error.
    fn settle(&self, next: &Planned, budget: Option<f64>, record: &Result<TrialRecord, String>) {
        let mut s = self.lock();
        let cost = record.as_ref().map_or(0.0, |r| r.cost_usd);
        if next.arm.uses_model() {
            s.running_model -= 1;
            s.budget.settle(budget, cost);
        }
        match record {
            Ok(r) => {
                if r.infra.is_some() {
                    s.infra += 1;
                    if s.infra > self.cfg.max_infra_failures {
                        s.stop = Some("infra_limit");
                    }
                }
            }
            Err(_) => s.stop = Some("fatal"),
        }
    }

    /// Writes a finished trial's record and says so; `None` for a trial the cancel killed
    /// (recorded as not run, not as a result).
    fn deliver(&self, record: Result<TrialRecord, String>) -> Option<Msg> {
        Some(match record {
            Ok(r) if self.cancel.is_cancelled() && r.infra.is_some() => {
                // Killed by the cancel, not by its infrastructure: not a result.
                self.lock().not_run.push(NotRun {
                    id: r.id.clone(),
                    reason: "cancelled".into(),
                });
                return None;
            }
            Ok(r) => match crate::fsio::write_json_atomic(
                &self.trials_dir.join(trial_file_name(&r.id)),
                &r,
            ) {
                Ok(()) => Msg::Done(Box::new(r)),
                Err(e) => Msg::Fatal(format!("writing the record of `{}`: {e}", r.id)),
            },
            Err(e) => Msg::Fatal(e),
        })
    }
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
        phases: None,
        start_digest: scenario.template.digest.clone(),
        run: None,
    }
}
