//! What a battery run is given ([`Config`]) and what it reports as it goes ([`Event`]):
//! the runner and its trial pool both read the one and emit the other.

use std::path::PathBuf;

use super::arm::Arm;
use super::plan::{Partition, Selector};
use super::trial::DriverConfig;
use super::trial_record::TrialRecord;

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
    #[must_use]
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
