//! Per-class and overall summaries, the contribution of the investigator over the
//! baseline, and the controls' verdicts — all recomputed from trial records alone.
//!
//! Invariant: [`summarize`] is a pure function of the trial records, the arms and the seed
//! (R-BAT-14): anyone holding results.json gets the same intervals and p-values. Infra
//! failures are left out of every denominator (R-BAT-9); a contaminated trial of a measured
//! arm counts as wrong (cheating never raises a score) and is listed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arm::Arm;
use super::stats::{self, PairedScenario};
use super::trial_record::TrialRecord;

/// Bootstrap resamples for every interval.
pub const RESAMPLES: u32 = 2000;
/// Two-sided significance level after Holm.
pub const ALPHA: f64 = 0.05;

const DECLINES: [&str; 3] = [
    "insufficient_evidence",
    "conflicted",
    "blocked_by_missing_source",
];

/// One arm's figures in one class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ArmSummary {
    /// Counted trials (infra failures excluded).
    pub n: usize,
    pub correct: usize,
    pub accuracy: Option<f64>,
    /// Of the proposals made, the share that are correct and grounded on labelled regions.
    pub grounded_precision: Option<f64>,
    /// Of the trials whose label is a decline, the share declined with the right status.
    pub correct_decline_rate: Option<f64>,
    /// Of the trials whose label is `conflicted`, the share ending `conflicted`.
    pub conflict_recall: Option<f64>,
    pub harmful: usize,
    pub harmful_at_auto: usize,
    pub harmful_rate: Option<f64>,
    pub harmful_at_auto_rate: Option<f64>,
    pub evidence_recall: Option<f64>,
    /// Claims stage 1 did not accept, over all claims made.
    pub unsupported_claim_rate: Option<f64>,
    pub contaminated: usize,
    pub infra: usize,
    pub mean_tokens_in: f64,
    pub mean_tokens_out: f64,
    pub mean_cost_usd: f64,
    pub mean_turns: f64,
    pub mean_wall_ms: f64,
    pub total_cost_usd: f64,
    /// Share of scenarios whose outcome differs across repeats (`None` with one repeat).
    pub noise_floor: Option<f64>,
}

/// The investigator's contribution over the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Contribution {
    pub arm: Arm,
    /// Investigator accuracy − baseline accuracy, as a fraction.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// Discordant scenarios: baseline right and investigator wrong (b), the reverse (c).
    pub b: u64,
    pub c: u64,
    /// Exact McNemar p.
    pub p: f64,
    /// Holm-adjusted across classes (`None` for the overall row).
    pub p_holm: Option<f64>,
    pub significant: bool,
    /// Contribution points (×100) per dollar and per 1k tokens of the investigator.
    pub per_dollar: Option<f64>,
    pub per_1k_tokens: Option<f64>,
}

/// One class (or `overall`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClassSummary {
    pub class: String,
    /// Scenarios in the class with at least one counted trial (a scenario whose every
    /// trial failed on its infrastructure measured nothing, R-BAT-9).
    pub n: usize,
    pub arms: BTreeMap<String, ArmSummary>,
    pub contribution: Option<Contribution>,
    /// The smallest accuracy difference detectable at this n (α 0.05, power 0.8); `None`
    /// when n is 0 (no difference is detectable: JSON has no infinity, and a `null` read
    /// back as a number would be refused).
    pub minimum_detectable_effect: Option<f64>,
    /// n cannot detect a 30-point difference.
    pub underpowered: bool,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OracleVerdict {
    pub ran: usize,
    pub passed: bool,
    /// Trials the oracle did not pass, with what it got.
    pub failures: Vec<String>,
    /// Oracle proposals reconciled to each tier.
    pub tiers: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheaterVerdict {
    pub ran: usize,
    pub passed: bool,
    pub flagged: usize,
    /// Reaching-cheater trials that found no label to leak (containment held).
    pub contained: usize,
    /// Trials that should have been flagged and were not.
    pub unflagged: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Controls {
    pub oracle: Option<OracleVerdict>,
    pub cheater: Option<CheaterVerdict>,
}

impl Controls {
    #[must_use]
    pub fn passed(&self) -> bool {
        self.oracle.as_ref().is_none_or(|o| o.passed)
            && self.cheater.as_ref().is_none_or(|c| c.passed)
    }
}

fn share(num: usize, den: usize) -> Option<f64> {
    (den > 0).then(|| stats::from_count(num) / stats::from_count(den))
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / stats::from_count(n)
    }
}

/// A seed per class so classes resample independently, yet reproducibly.
#[must_use]
pub fn class_seed(seed: u64, class: &str) -> u64 {
    // FNV-1a: stable across platforms and releases (unlike std's hasher).
    class.bytes().fold(seed ^ 0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn arm_summary(trials: &[&TrialRecord]) -> ArmSummary {
    let counted: Vec<&&TrialRecord> = trials.iter().filter(|t| t.counted()).collect();
    let n = counted.len();
    let correct = counted.iter().filter(|t| t.correct).count();
    let proposals: Vec<_> = counted.iter().filter(|t| t.patch.is_some()).collect();
    let declines: Vec<_> = counted
        .iter()
        .filter(|t| {
            t.expected_status
                .as_deref()
                .is_some_and(|s| DECLINES.contains(&s))
        })
        .collect();
    let conflicts: Vec<_> = counted
        .iter()
        .filter(|t| t.expected_status.as_deref() == Some("conflicted"))
        .collect();
    let harmful = counted.iter().filter(|t| t.harmful).count();
    let harmful_at_auto = counted.iter().filter(|t| t.harmful_at_auto).count();
    let recalls: Vec<f64> = counted.iter().filter_map(|t| t.evidence_recall).collect();
    let claims: u32 = counted.iter().map(|t| t.claims).sum();
    let unsupported: u32 = counted.iter().map(|t| t.unsupported_claims).sum();
    // Noise floor: per scenario, the outcomes of its repeats.
    let mut by_scenario: BTreeMap<&str, Vec<bool>> = BTreeMap::new();
    for t in &counted {
        by_scenario.entry(&t.scenario).or_default().push(t.correct);
    }
    let repeats: Vec<Vec<bool>> = by_scenario.into_values().collect();
    ArmSummary {
        n,
        correct,
        accuracy: share(correct, n),
        grounded_precision: share(
            proposals.iter().filter(|t| t.grounded && t.correct).count(),
            proposals.len(),
        ),
        correct_decline_rate: share(
            declines.iter().filter(|t| t.status_correct).count(),
            declines.len(),
        ),
        conflict_recall: share(
            conflicts
                .iter()
                .filter(|t| t.status.as_deref() == Some("conflicted"))
                .count(),
            conflicts.len(),
        ),
        harmful,
        harmful_at_auto,
        harmful_rate: share(harmful, n),
        harmful_at_auto_rate: share(harmful_at_auto, n),
        evidence_recall: (!recalls.is_empty()).then(|| mean(recalls.iter().copied())),
        unsupported_claim_rate: share(unsupported as usize, claims as usize),
        contaminated: counted.iter().filter(|t| t.contaminated).count(),
        infra: trials.len() - n,
        mean_tokens_in: mean(counted.iter().map(|t| stats::from_u64(t.tokens_in))),
        mean_tokens_out: mean(counted.iter().map(|t| stats::from_u64(t.tokens_out))),
        mean_cost_usd: mean(counted.iter().map(|t| t.cost_usd)),
        mean_turns: mean(counted.iter().map(|t| f64::from(t.turns))),
        mean_wall_ms: mean(counted.iter().map(|t| stats::from_u64(t.wall_ms))),
        total_cost_usd: counted.iter().map(|t| t.cost_usd).sum(),
        noise_floor: stats::noise_floor(&repeats),
    }
}

/// Whether a trial counts as right for accuracy: correct and not contaminated.
#[must_use]
pub fn right(t: &TrialRecord) -> bool {
    t.correct && !t.contaminated
}

fn contribution(
    trials: &[&TrialRecord],
    investigator: Arm,
    seed: u64,
    class: &str,
    arm: &ArmSummary,
) -> Option<Contribution> {
    let mut pairs: BTreeMap<&str, PairedScenario> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.counted()) {
        let entry = pairs.entry(&t.scenario).or_insert_with(|| PairedScenario {
            scenario: t.scenario.clone(),
            baseline: vec![],
            arm: vec![],
        });
        if t.arm == Arm::Baseline {
            entry.baseline.push(right(t));
        } else if t.arm == investigator {
            entry.arm.push(right(t));
        }
    }
    let pairs: Vec<PairedScenario> = pairs.into_values().collect();
    let interval = stats::bootstrap_contribution(&pairs, class_seed(seed, class), RESAMPLES)?;
    let (b, c) = stats::discordant(&pairs);
    let points = interval.estimate * 100.0;
    let tokens = (arm.mean_tokens_in + arm.mean_tokens_out) * stats::from_count(arm.n);
    Some(Contribution {
        arm: investigator,
        estimate: interval.estimate,
        low: interval.low,
        high: interval.high,
        b,
        c,
        p: stats::mcnemar_exact(b, c),
        p_holm: None,
        significant: false,
        per_dollar: (arm.total_cost_usd > 0.0).then(|| points / arm.total_cost_usd),
        per_1k_tokens: (tokens > 0.0).then(|| points / (tokens / 1000.0)),
    })
}

fn class_summary(
    class: &str,
    trials: &[&TrialRecord],
    arms: &[Arm],
    investigator: Arm,
    seed: u64,
) -> ClassSummary {
    let mut per_arm = BTreeMap::new();
    for arm in arms {
        let mine: Vec<&TrialRecord> = trials.iter().copied().filter(|t| t.arm == *arm).collect();
        per_arm.insert(arm.to_string(), arm_summary(&mine));
    }
    let n = {
        let mut s: Vec<&str> = trials
            .iter()
            .filter(|t| t.counted())
            .map(|t| t.scenario.as_str())
            .collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let contribution = if investigator != Arm::Baseline && arms.contains(&Arm::Baseline) {
        per_arm
            .get(investigator.as_str())
            .and_then(|a| contribution(trials, investigator, seed, class, a))
    } else {
        None
    };
    ClassSummary {
        class: class.to_string(),
        n,
        arms: per_arm,
        contribution,
        minimum_detectable_effect: Some(stats::minimum_detectable_effect(n, ALPHA, 0.8))
            .filter(|mde| mde.is_finite()),
        underpowered: stats::underpowered(n),
    }
}

/// Per-class summaries (sorted by class), the overall summary, with Holm applied across
/// the classes' McNemar p-values.
#[must_use]
pub fn summarize(
    trials: &[TrialRecord],
    arms: &[Arm],
    investigator: Arm,
    seed: u64,
) -> (Vec<ClassSummary>, ClassSummary) {
    let mut by_class: BTreeMap<&str, Vec<&TrialRecord>> = BTreeMap::new();
    for t in trials {
        by_class.entry(&t.class).or_default().push(t);
    }
    let mut classes: Vec<ClassSummary> = by_class
        .iter()
        .map(|(class, ts)| class_summary(class, ts, arms, investigator, seed))
        .collect();
    let ps: Vec<Option<f64>> = classes
        .iter()
        .map(|c| c.contribution.as_ref().map(|k| k.p))
        .collect();
    for (c, adj) in classes.iter_mut().zip(stats::holm(&ps)) {
        if let (Some(k), Some(p)) = (c.contribution.as_mut(), adj) {
            k.p_holm = Some(p);
            k.significant = p < ALPHA;
        }
    }
    let all: Vec<&TrialRecord> = trials.iter().collect();
    let mut overall = class_summary("overall", &all, arms, investigator, seed);
    if let Some(k) = overall.contribution.as_mut() {
        k.significant = k.p < ALPHA;
    }
    (classes, overall)
}

/// The controls' verdicts (R-BAT-4, R-BAT-8). A control trial that ended in an
/// infrastructure failure proves nothing, so it fails its control, named, instead of
/// leaving the denominator: a control that never ran cannot pass.
#[must_use]
pub fn controls(trials: &[TrialRecord], arms: &[Arm]) -> Controls {
    let oracle = arms.contains(&Arm::Oracle).then(|| {
        let mine: Vec<&TrialRecord> = trials.iter().filter(|t| t.arm == Arm::Oracle).collect();
        let failures: Vec<String> = mine
            .iter()
            .filter(|t| !t.correct || !t.counted())
            .map(|t| match &t.infra {
                Some(i) => format!("{}: no result (infrastructure: {})", t.scenario, i.error),
                None => format!(
                    "{}: expected {}, got {}{}",
                    t.scenario,
                    t.expected_status.as_deref().unwrap_or("?"),
                    t.status.as_deref().unwrap_or("no result"),
                    t.reason
                        .as_deref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                ),
            })
            .collect();
        let mut tiers = BTreeMap::new();
        for t in &mine {
            if let Some(tier) = &t.tier {
                *tiers.entry(tier.clone()).or_insert(0) += 1;
            }
        }
        OracleVerdict {
            ran: mine.len(),
            passed: failures.is_empty(),
            failures,
            tiers,
        }
    });
    let cheats = arms
        .iter()
        .any(|a| matches!(a, Arm::CheaterReach | Arm::CheaterHanded));
    let cheater = cheats.then(|| {
        let mine: Vec<&TrialRecord> = trials
            .iter()
            .filter(|t| matches!(t.arm, Arm::CheaterReach | Arm::CheaterHanded))
            .collect();
        let flagged = mine.iter().filter(|t| t.contaminated).count();
        let contained = mine
            .iter()
            .filter(|t| {
                t.arm == Arm::CheaterReach
                    && t.counted()
                    && !t.contaminated
                    && t.reached_labels == Some(false)
            })
            .count();
        let unflagged: Vec<String> = mine
            .iter()
            .filter(|t| {
                let contained = t.arm == Arm::CheaterReach && t.reached_labels == Some(false);
                !t.counted() || !(t.contaminated || contained)
            })
            .map(|t| t.id.clone())
            .collect();
        CheaterVerdict {
            ran: mine.len(),
            passed: unflagged.is_empty(),
            flagged,
            contained,
            unflagged,
        }
    });
    Controls { oracle, cheater }
}
