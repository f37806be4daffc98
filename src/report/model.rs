//! The figures every view shows, formatted once: the per-class rows, the three largest
//! effects, the manifest line, the controls' verdicts and the trials a reader must know
//! about (infrastructure failures, contaminated, not run).
//!
//! Invariant: markdown, HTML, JSON and the terminal table format a number the same way,
//! because they all take it from here; nothing here reads anything but the results document.

use serde::Serialize;

use crate::battery::results::{Manifest, ResultsDoc, TrialRecord};
use crate::battery::summary::{ClassSummary, Contribution};

/// A share as a whole percentage, `—` when there is none.
#[must_use]
pub fn pct(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{:.0}%", v * 100.0))
}

/// A difference of shares as signed points (`+40`, `-7`, `+0`).
#[must_use]
pub fn points(x: f64) -> String {
    let p = (x * 100.0).round();
    // `-0` reads as a sign error.
    if p == 0.0 {
        "+0".into()
    } else {
        format!("{p:+.0}")
    }
}

/// `+40 [+12, +64]`.
#[must_use]
pub fn interval(estimate: f64, low: f64, high: f64) -> String {
    format!("{} [{}, {}]", points(estimate), points(low), points(high))
}

#[must_use]
pub fn usd(x: f64) -> String {
    format!("${x:.2}")
}

/// The part of a timestamp a person reads: `2026-12-01 00:25 UTC`.
#[must_use]
pub fn short_time(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(day), Some(hm)) if rfc3339.as_bytes().get(10) == Some(&b'T') => {
            format!("{day} {hm} UTC")
        }
        _ => rfc3339.to_string(),
    }
}

/// The first 12 hex digits of a `sha256:` digest.
#[must_use]
pub fn short_hash(h: &str) -> String {
    let hex = h.strip_prefix("sha256:").unwrap_or(h);
    hex.chars().take(12).collect()
}

/// One row of the per-class table (a class, or `overall`).
#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    pub class: String,
    pub overall: bool,
    pub n: usize,
    pub underpowered: bool,
    pub baseline: String,
    pub investigator: String,
    /// Both arms' accuracy as fractions, for the charts.
    pub baseline_accuracy: Option<f64>,
    pub investigator_accuracy: Option<f64>,
    /// `+40 [+12, +64]`, or `—`.
    pub contribution: String,
    pub p_holm: String,
    pub significant: bool,
    pub harmful_at_auto: String,
    pub cost: String,
    /// Minimum detectable effect, in points.
    pub mde: String,
}

fn class_row(c: &ClassSummary, investigator: &str) -> ClassRow {
    let base = c.arms.get("baseline");
    let arm = c.arms.get(investigator);
    let k = c.contribution.as_ref();
    let overall = c.class == "overall";
    ClassRow {
        class: c.class.clone(),
        overall,
        n: c.n,
        underpowered: c.underpowered && !overall,
        baseline: pct(base.and_then(|a| a.accuracy)),
        investigator: pct(arm.and_then(|a| a.accuracy)),
        baseline_accuracy: base.and_then(|a| a.accuracy),
        investigator_accuracy: arm.and_then(|a| a.accuracy),
        contribution: k.map_or("—".into(), |k| interval(k.estimate, k.low, k.high)),
        p_holm: k.map_or("—".into(), |k| format!("{:.3}", k.p_holm.unwrap_or(k.p))),
        significant: k.is_some_and(|k| k.significant),
        harmful_at_auto: arm.map_or("—".into(), |a| a.harmful_at_auto.to_string()),
        cost: arm.map_or("—".into(), |a| usd(a.total_cost_usd)),
        mde: c
            .minimum_detectable_effect
            .map_or("—".into(), |mde| format!("{:.0}", mde * 100.0)),
    }
}

/// Every class, then `overall`.
#[must_use]
pub fn class_rows(doc: &ResultsDoc) -> Vec<ClassRow> {
    let inv = doc.manifest.investigator.arm.as_str();
    doc.classes
        .iter()
        .chain(std::iter::once(&doc.overall))
        .map(|c| class_row(c, inv))
        .collect()
}

/// One of the largest effects, in words.
#[derive(Debug, Clone, Serialize)]
pub struct Effect {
    pub class: String,
    /// `+40 points [+12, +64]`.
    pub text: String,
    pub significant: bool,
    pub underpowered: bool,
}

/// The `count` classes whose contribution is largest in size (ties by class name).
#[must_use]
pub fn largest_effects(doc: &ResultsDoc, count: usize) -> Vec<Effect> {
    let mut with: Vec<(&ClassSummary, &Contribution)> = doc
        .classes
        .iter()
        .filter_map(|c| c.contribution.as_ref().map(|k| (c, k)))
        .filter(|(_, k)| k.estimate != 0.0)
        .collect();
    with.sort_by(|(a, ka), (b, kb)| {
        kb.estimate
            .abs()
            .total_cmp(&ka.estimate.abs())
            .then_with(|| a.class.cmp(&b.class))
    });
    with.into_iter()
        .take(count)
        .map(|(c, k)| Effect {
            class: c.class.clone(),
            text: format!(
                "{} points [{}, {}]",
                points(k.estimate),
                points(k.low),
                points(k.high)
            ),
            significant: k.significant,
            underpowered: c.underpowered,
        })
        .collect()
}

/// Who investigated, in one phrase: `heuristic (anvil-bench 0.1.0)`,
/// `claude-code (2.1.3, model claude-x)`.
#[must_use]
pub fn investigator_phrase(m: &Manifest) -> String {
    let i = &m.investigator;
    let mut parts = vec![i.version.clone()];
    if let Some(model) = &i.model {
        parts.push(format!("model {model}"));
    }
    if i.endpoint != "none" {
        parts.push(format!("via {}", i.endpoint));
    }
    format!("{} ({})", i.arm, parts.join(", "))
}

/// The manifest line: corpus, label seal, investigator, repeats, date; `code` marks the
/// digests up (backticks in markdown, nothing in HTML).
pub fn manifest_line_with(m: &Manifest, code: fn(&str) -> String) -> String {
    let repeats = if m.repeats == 1 {
        "1 repeat".to_string()
    } else {
        format!("{} repeats", m.repeats)
    };
    format!(
        "corpus {} · label seal {} · investigator {} · {repeats} · seed {} · {}",
        code(&short_hash(&m.corpus_digest)),
        code(&short_hash(&m.label_seal)),
        investigator_phrase(m),
        m.seed,
        short_time(&m.started_at),
    )
}

/// The manifest line for markdown.
#[must_use]
pub fn manifest_line(m: &Manifest) -> String {
    manifest_line_with(m, |s| format!("`{s}`"))
}

/// The controls' verdicts as sentences, and the trials they name.
#[derive(Debug, Clone, Serialize)]
pub struct ControlLine {
    pub name: &'static str,
    pub passed: bool,
    pub text: String,
    pub named: Vec<String>,
}

#[must_use]
pub fn controls(doc: &ResultsDoc) -> Vec<ControlLine> {
    let mut out = Vec::new();
    if let Some(o) = &doc.controls.oracle {
        let tiers: Vec<String> = o.tiers.iter().map(|(t, n)| format!("{t} {n}")).collect();
        out.push(ControlLine {
            name: "oracle",
            passed: o.passed,
            text: format!(
                "oracle (positive control) {}: {} of {} trials reached the label{}",
                if o.passed { "passed" } else { "FAILED" },
                o.ran - o.failures.len(),
                o.ran,
                if tiers.is_empty() {
                    String::new()
                } else {
                    format!("; tiers {}", tiers.join(", "))
                }
            ),
            named: o.failures.clone(),
        });
    }
    if let Some(c) = &doc.controls.cheater {
        out.push(ControlLine {
            name: "cheater",
            passed: c.passed,
            text: format!(
                "cheater (negative control) {}: {} trials, {} flagged contaminated, {} found nothing to leak",
                if c.passed { "passed" } else { "FAILED" },
                c.ran,
                c.flagged,
                c.contained
            ),
            named: c.unflagged.clone(),
        });
    }
    out
}

/// Trials of a measured arm flagged contaminated (counted wrong).
#[must_use]
pub fn contaminated(doc: &ResultsDoc) -> Vec<&TrialRecord> {
    doc.trials
        .iter()
        .filter(|t| t.contaminated && !t.arm.is_control())
        .collect()
}

/// Trials that ended in an infrastructure failure (left out of every denominator).
#[must_use]
pub fn infra(doc: &ResultsDoc) -> Vec<&TrialRecord> {
    doc.trials.iter().filter(|t| t.infra.is_some()).collect()
}

/// What a trial's outcome was, in one word.
#[must_use]
pub fn outcome(t: &TrialRecord) -> &'static str {
    if t.infra.is_some() {
        "infra"
    } else if t.arm.is_control() {
        control_outcome(t)
    } else if t.contaminated {
        "contaminated"
    } else if t.correct {
        "right"
    } else {
        "wrong"
    }
}

/// Controls pass differently: the oracle must be right, a cheater must be caught (or, for
/// the reaching cheater, find nothing to leak).
fn control_outcome(t: &TrialRecord) -> &'static str {
    use crate::battery::Arm;
    match t.arm {
        Arm::Oracle if t.correct => "passed",
        Arm::CheaterReach | Arm::CheaterHanded if t.contaminated => "caught",
        Arm::CheaterReach if t.reached_labels == Some(false) => "contained",
        _ => "FAILED",
    }
}

/// Whether a trial counts as a pass in JUnit and as green in the trials table.
#[must_use]
pub fn passed(t: &TrialRecord) -> bool {
    matches!(outcome(t), "right" | "passed" | "caught" | "contained")
}

/// The anchor of a trial's drill-down in report.html.
#[must_use]
pub fn anchor(id: &str) -> String {
    let stem = crate::battery::results::trial_file_name(id);
    format!("t-{}", stem.trim_end_matches(".json"))
}
