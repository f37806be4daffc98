//! One trial's record: what a trial of one scenario, one arm and one repeat produced and
//! how it scored. `results.json` lists them and [`super::summary`] recomputes every figure
//! from them alone.
//!
//! Invariant: a record holds only what the trial stored; nothing in it is derived from
//! other trials.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::arm::Arm;

/// Why a trial's outcome is not counted: an infrastructure failure after every retry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Infra {
    pub error: String,
    pub attempts: u32,
}

/// A trial's wall time by phase, in microseconds, in the order the trial runs them. Their
/// sum is the trial's wall time less the clock reads between them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Phases {
    /// Copying the scenario's repository into the trial's own directory.
    pub prepare_us: u64,
    /// Opening the case on the copy.
    pub open_us: u64,
    /// The arm's investigation, its driver's work included.
    pub investigate_us: u64,
    /// Of `investigate_us`, the agent's process from spawn to exit, its sandbox's start
    /// included (process arms only, from the execution record, to the millisecond).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_process_us: Option<u64>,
    /// Finalizing what the agent left unfinalized, and closing the case for its tier.
    pub end_us: u64,
    /// The contamination scan of the run and the repository copy.
    pub scan_us: u64,
    /// Checking the case closed, reading its label and scoring it.
    pub score_us: u64,
    /// Moving the case run under the results' `runs/`.
    pub keep_us: u64,
}

/// One trial: one scenario, one arm, one repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TrialRecord {
    pub format: String,
    pub format_version: u32,
    /// `<class>/<name>::<arm>#<repeat>`.
    pub id: String,
    pub scenario: String,
    pub class: String,
    pub skill: String,
    pub arm: Arm,
    pub repeat: u32,
    /// The finalized status (`None`: the case never finalized).
    pub status: Option<String>,
    pub expected_status: Option<String>,
    /// The label's `expect` object (status, values, evidence regions), copied in after the
    /// trial's case ended, so a report shows the label beside the proposal from results.json
    /// alone. Absent in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// The close tier (`auto`, `review`, `reject`) when there was something to apply.
    pub tier: Option<String>,
    /// The patch the case proposed (field → value).
    pub patch: Option<BTreeMap<String, Value>>,
    pub reason: Option<String>,
    pub status_correct: bool,
    pub values_correct: bool,
    /// Status and values both right: the outcome the accuracy counts.
    pub correct: bool,
    /// Every patched value grounded on accepted claims citing a labelled region.
    pub grounded: bool,
    /// Share of labelled regions the case's evidence overlaps (`None`: the label lists none).
    pub evidence_recall: Option<f64>,
    pub claims: u32,
    /// Claims stage 1 did not accept.
    pub unsupported_claims: u32,
    /// A patch where a decline was right, or a wrong value.
    pub harmful: bool,
    /// Harmful and reconciled to tier `auto`: applied with no human looking.
    pub harmful_at_auto: bool,
    pub contaminated: bool,
    /// Where a canary was found (run-relative file names).
    pub contamination: Vec<String>,
    /// For the reaching cheater: whether it reported reaching any label file.
    pub reached_labels: Option<bool>,
    pub infra: Option<Infra>,
    pub attempts: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
    pub turns: u32,
    pub wall_ms: u64,
    /// Where `wall_ms` went, phase by phase (absent in records written before it was kept,
    /// and for a trial that never ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// Digest of the repository copy as the trial started (the same for every arm of a
    /// scenario, R-BAT-6).
    pub start_digest: String,
    /// The case run, relative to the results directory.
    pub run: Option<String>,
}

/// `<class>/<name>::<arm>#<repeat>`.
#[must_use]
pub fn trial_id(scenario: &str, arm: Arm, repeat: u32) -> String {
    format!("{scenario}::{arm}#{repeat}")
}

impl TrialRecord {
    /// Counted in denominators: not an infrastructure failure.
    #[must_use]
    pub fn counted(&self) -> bool {
        self.infra.is_none()
    }

    /// The first member (camelCase) that contradicts the rest of the record or its own
    /// meaning, with why: the id is the scenario, arm and repeat; the class is the
    /// scenario's; correct is status and values correct; harmful at auto is harmful at
    /// tier `auto`; a recall is a share; unsupported claims are some of the claims; a cost
    /// is not negative. A record that holds one was edited (or never written by a battery),
    /// and its figures would count what no trial did.
    #[must_use]
    pub fn inconsistency(&self) -> Option<(&'static str, String)> {
        let id = trial_id(&self.scenario, self.arm, self.repeat);
        let class = self.scenario.split('/').next().unwrap_or_default();
        let checks = [
            (
                self.id != id,
                "id",
                format!("is `{}`, but scenario, arm and repeat make `{id}`", self.id),
            ),
            (
                self.class != class,
                "class",
                format!("is `{}`, but the scenario is in `{class}`", self.class),
            ),
            (
                self.correct != (self.status_correct && self.values_correct),
                "correct",
                "is not `statusCorrect` and `valuesCorrect`".to_string(),
            ),
            (
                self.harmful_at_auto && !(self.harmful && self.tier.as_deref() == Some("auto")),
                "harmfulAtAuto",
                "is true for a trial not harmful at tier `auto`".to_string(),
            ),
            (
                self.evidence_recall
                    .is_some_and(|r| !(0.0..=1.0).contains(&r)),
                "evidenceRecall",
                "is not a share between 0 and 1".to_string(),
            ),
            (
                self.unsupported_claims > self.claims,
                "unsupportedClaims",
                format!("is more than the {} claims", self.claims),
            ),
            (
                !(self.cost_usd.is_finite() && self.cost_usd >= 0.0),
                "costUsd",
                "is negative".to_string(),
            ),
        ];
        checks
            .into_iter()
            .find(|(bad, _, _)| *bad)
            .map(|(_, field, why)| (field, why))
    }
}
