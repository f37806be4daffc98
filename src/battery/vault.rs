//! The evaluator's answer key during a battery: sealed before the first trial, handed out
//! one label at a time only for a case that is closed, re-sealed after the last trial.
//!
//! Invariant: no label content reaches a trial before its case is closed (R-BAT-2): the only
//! way to a scored label is [`Vault::label_for`], which takes a [`Closed`] proof that only
//! [`Closed::check`] makes, from the run's own lifecycle on disk. The positive control is
//! and the over-claiming adversary are the declared exceptions ([`Vault::answer_told_to`]):
//! they are told the answer, and no other arm can be.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::arm::Arm;
use super::corpus::{LabelDoc, load_labels, seal};
use crate::case::RunHandle;
use crate::case::lifecycle::State;

/// The labels of a battery and the seal taken when they were first read.
#[derive(Debug)]
pub struct Vault {
    dir: PathBuf,
    seal: String,
    /// scenario id → sha256 of the label's canonical JSON at seal time.
    hashes: BTreeMap<String, String>,
    /// Every canary in the set (contamination is any canary, not only the trial's own).
    canaries: BTreeSet<String>,
}

/// Proof that a case run's answer is fixed: closed, or finalized when close refused.
#[derive(Debug, Clone)]
pub struct Closed {
    /// Private: only [`Closed::check`] makes one.
    _proof: (),
}

impl Closed {
    /// Checks the run's lifecycle on disk: only a closed (or, when close refused, a
    /// finalized) run yields the proof.
    ///
    /// # Errors
    ///
    /// `VaultError::Run` when the run's lifecycle cannot be read, and `NotEnded` when the
    /// run is neither closed nor finalized.
    pub fn check(run: &RunHandle) -> Result<Closed, VaultError> {
        let lc = run.lifecycle().map_err(VaultError::Run)?;
        if !matches!(lc.state, State::Closed | State::Finalized) {
            return Err(VaultError::NotEnded(lc.state));
        }
        Ok(Closed { _proof: () })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("the labels directory `{dir}` has problems:\n{problems}")]
    Problems { dir: PathBuf, problems: String },
    #[error("no label for scenario `{0}` (the label set was sealed without it)")]
    Missing(String),
    #[error("the label of `{0}` changed after the seal was taken")]
    Changed(String),
    #[error("the `{0}` arm is never told a label before its case ends")]
    NotTold(Arm),
    #[error("the run is {0}; a label is read only after its case is finalized and closed")]
    NotEnded(State),
    #[error("the run's lifecycle cannot be read: {0}")]
    Run(#[source] crate::case::CaseError),
}

impl Vault {
    /// Reads and seals the label set under `dir`. Any problem (a stray file, a symlink, an
    /// unparseable label) refuses the whole set: a partial answer key is never sealed.
    ///
    /// # Errors
    ///
    /// `VaultError::Problems` listing every problem under `dir` (a stray file, a symlink,
    /// an unreadable directory, an unparseable label): the whole set is refused.
    pub fn open(dir: &Path) -> Result<Vault, VaultError> {
        let (labels, problems) = load_labels(dir);
        if !problems.is_empty() {
            return Err(VaultError::Problems {
                dir: dir.to_path_buf(),
                problems: problems
                    .iter()
                    .map(|p| format!("  {p}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            });
        }
        Ok(Vault {
            dir: dir.to_path_buf(),
            seal: seal(&labels),
            hashes: labels
                .iter()
                .map(|l| (l.doc.scenario.clone(), crate::canon::canonical_hash(&l.doc)))
                .collect(),
            canaries: labels.iter().map(|l| l.doc.canary.clone()).collect(),
        })
    }

    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    #[must_use]
    pub fn seal(&self) -> &str {
        &self.seal
    }

    #[must_use]
    pub fn canaries(&self) -> &BTreeSet<String> {
        &self.canaries
    }

    #[must_use]
    pub fn has(&self, scenario: &str) -> bool {
        self.hashes.contains_key(scenario)
    }

    /// The seal of the set as it is on disk now (R-BAT-5 re-check).
    ///
    /// # Errors
    ///
    /// `VaultError::Problems` when the label set on disk now has a problem (see
    /// [`Vault::open`]).
    pub fn reseal(&self) -> Result<String, VaultError> {
        Vault::open(&self.dir).map(|v| v.seal)
    }

    /// The label of `scenario`, read now from disk, for a closed case; refused when it
    /// differs from the sealed one.
    ///
    /// # Errors
    ///
    /// `VaultError::Missing` when `scenario` was not in the sealed set, and
    /// `VaultError::Changed` when its label file can no longer be read or differs from the
    /// sealed one.
    pub fn label_for(&self, scenario: &str, _closed: &Closed) -> Result<LabelDoc, VaultError> {
        self.read(scenario)
    }

    /// The answer told before the case opens, to the two arms that are built on it: the
    /// positive control (it must reach every label through the rails, R-BAT-8) and the
    /// over-claiming adversary (it must claim a value other than the right one). Any other
    /// arm is refused.
    ///
    /// # Errors
    ///
    /// `VaultError::NotTold` for any arm other than the oracle and the over-claiming
    /// adversary; then `Missing` or `Changed` as in [`Vault::label_for`].
    pub fn answer_told_to(&self, arm: Arm, scenario: &str) -> Result<LabelDoc, VaultError> {
        if !matches!(arm, Arm::Oracle | Arm::Overclaim) {
            return Err(VaultError::NotTold(arm));
        }
        self.read(scenario)
    }

    /// The canary the handed-canary cheater is given on purpose.
    ///
    /// # Errors
    ///
    /// `VaultError::Missing` when `scenario` was not in the sealed set, and
    /// `VaultError::Changed` when its label can no longer be read or differs from the
    /// sealed one.
    pub fn canary_for_cheater(&self, scenario: &str) -> Result<String, VaultError> {
        self.read(scenario).map(|l| l.canary)
    }

    fn read(&self, scenario: &str) -> Result<LabelDoc, VaultError> {
        let want = self
            .hashes
            .get(scenario)
            .ok_or_else(|| VaultError::Missing(scenario.to_string()))?;
        let file = self.dir.join(format!("{scenario}.json"));
        let doc = super::corpus::load_label(&file)
            .map_err(|_| VaultError::Changed(scenario.to_string()))?;
        if doc.scenario != scenario || crate::canon::canonical_hash(&doc) != *want {
            return Err(VaultError::Changed(scenario.to_string()));
        }
        Ok(doc)
    }
}
