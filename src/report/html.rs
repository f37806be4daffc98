//! report.html: one self-contained page (no network, no external asset, readable without
//! JavaScript) rendered through minijinja with HTML auto-escaping, and the HTML of
//! `report diff`.
//!
//! Invariant: every string from results.json or a kept run reaches the page through the
//! template engine's escaping; the only markup inserted verbatim is the charts' SVG, which
//! plotters generates (escaping its text itself).

use std::path::Path;

use minijinja::value::{Serde, Value};
use minijinja::{Environment, context};
use serde::Serialize;

use super::diff::Diff;
use super::drill::{self, Drill, Pair};
use super::model::{self, ClassRow, ControlLine, Effect};
use super::{ReportError, charts};
use crate::battery::results::{ResultsDoc, TrialRecord};
use crate::battery::summary::{ALPHA, ArmSummary, RESAMPLES};

const BASE: &str = include_str!("templates/base.html");
const REPORT: &str = include_str!("templates/report.html");
const DRILL: &str = include_str!("templates/drill.html");
const DIFF: &str = include_str!("templates/diff.html");
const JUNIT: &str = include_str!("templates/junit.xml");

/// The template environment: auto-escaping by file name (`.html` and `.xml` escape).
pub(crate) fn environment() -> Result<Environment<'static>, ReportError> {
    let mut env = Environment::new();
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
        .map_err(|e| ReportError::Render {
            what: "the template syntax",
            source: e,
        })?;
    env.set_syntax(syntax);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    for (name, source) in [
        ("base.html", BASE),
        ("report.html", REPORT),
        ("drill.html", DRILL),
        ("diff.html", DIFF),
        ("junit.xml", JUNIT),
    ] {
        env.add_template(name, source)
            .map_err(|e| ReportError::Render {
                what: name,
                source: e,
            })?;
    }
    Ok(env)
}

pub(crate) fn render_template(name: &'static str, ctx: Value) -> Result<String, ReportError> {
    let env = environment()?;
    let render = |env: &Environment| env.get_template(name)?.render(ctx);
    render(&env).map_err(|e| ReportError::Render {
        what: name,
        source: e,
    })
}

#[derive(Debug, Serialize)]
struct TrialRow {
    anchor: String,
    scenario: String,
    class: String,
    arm: String,
    repeat: u32,
    outcome: &'static str,
    passed: bool,
    expected: String,
    got: String,
    harmful: &'static str,
    tier: String,
    tokens: u64,
    cost: String,
    cost_sort: f64,
    wall_ms: u64,
    flags: String,
}

fn trial_row(t: &TrialRecord) -> TrialRow {
    let mut flags = Vec::new();
    if t.infra.is_some() {
        flags.push("infra");
    }
    if t.contaminated {
        flags.push("contaminated");
    }
    TrialRow {
        anchor: model::anchor(&t.id),
        scenario: t.scenario.clone(),
        class: t.class.clone(),
        arm: t.arm.to_string(),
        repeat: t.repeat,
        outcome: model::outcome(t),
        passed: model::passed(t),
        expected: t.expected_status.clone().unwrap_or_else(|| "—".into()),
        got: t.status.clone().unwrap_or_else(|| "no result".into()),
        harmful: match (t.harmful, t.harmful_at_auto) {
            (_, true) => "at auto",
            (true, false) => "yes",
            _ => "",
        },
        tier: t.tier.clone().unwrap_or_default(),
        tokens: t.tokens_in + t.tokens_out,
        cost: model::usd(t.cost_usd),
        cost_sort: t.cost_usd,
        wall_ms: t.wall_ms,
        flags: flags.join(", "),
    }
}

/// One arm's figures over the whole battery.
#[derive(Debug, Serialize)]
struct ArmRow {
    arm: String,
    n: usize,
    accuracy: String,
    grounded_precision: String,
    correct_decline_rate: String,
    conflict_recall: String,
    harmful_rate: String,
    harmful_at_auto_rate: String,
    evidence_recall: String,
    unsupported_claim_rate: String,
    noise_floor: String,
    mean_tokens: String,
    total_cost: String,
    mean_wall: String,
}

fn arm_row(arm: &str, a: &ArmSummary) -> ArmRow {
    let pct = model::pct;
    ArmRow {
        arm: arm.to_string(),
        n: a.n,
        accuracy: pct(a.accuracy),
        grounded_precision: pct(a.grounded_precision),
        correct_decline_rate: pct(a.correct_decline_rate),
        conflict_recall: pct(a.conflict_recall),
        harmful_rate: pct(a.harmful_rate),
        harmful_at_auto_rate: pct(a.harmful_at_auto_rate),
        evidence_recall: pct(a.evidence_recall),
        unsupported_claim_rate: pct(a.unsupported_claim_rate),
        noise_floor: a
            .noise_floor
            .map_or("— (1 repeat)".into(), |x| pct(Some(x))),
        mean_tokens: format!("{:.0}", a.mean_tokens_in + a.mean_tokens_out),
        total_cost: model::usd(a.total_cost_usd),
        mean_wall: format!("{:.0} ms", a.mean_wall_ms),
    }
}

#[derive(Debug, Serialize)]
struct Page {
    title: String,
    investigator: String,
    manifest_line: String,
    ok: bool,
    verdict: String,
    classes: Vec<ClassRow>,
    any_underpowered: bool,
    effects: Vec<Effect>,
    controls: Vec<ControlLine>,
    arms: Vec<ArmRow>,
    infra: Vec<Pair>,
    contaminated: Vec<Pair>,
    not_run: Vec<Pair>,
    nondeterministic: Vec<String>,
    seal_changed: Option<Pair>,
    complete: bool,
    trials: Vec<TrialRow>,
    drills: Vec<Drill>,
    kept_runs: usize,
    manifest: Vec<Pair>,
    seed: u64,
    resamples: u32,
    alpha: f64,
}

fn verdict(doc: &ResultsDoc) -> (bool, String) {
    use crate::battery::runner::{Verdict, verdict};
    let v = verdict(doc, !doc.complete, false);
    let text = match v {
        Verdict::Completed => "completed: the controls passed",
        Verdict::ControlsFailed => "FAILED: a control failed",
        Verdict::LabelsChanged => "FAILED: the label set changed during the run",
        Verdict::Nondeterministic => "FAILED: a deterministic arm disagreed with itself",
        Verdict::InfraLimit => "stopped: too many infrastructure failures",
        Verdict::Cancelled => "incomplete: not every planned trial finished",
    };
    (v == Verdict::Completed, text.to_string())
}

fn manifest_pairs(doc: &ResultsDoc) -> Vec<Pair> {
    let value = serde_json::to_value(&doc.manifest).unwrap_or_default();
    let Some(map) = value.as_object() else {
        return vec![];
    };
    map.iter()
        .map(|(k, v)| Pair {
            key: k.clone(),
            value: match v {
                serde_json::Value::String(s) => s.clone(),
                other => serde_json::to_string_pretty(other).unwrap_or_default(),
            },
        })
        .collect()
}

fn page(doc: &ResultsDoc, dir: &Path) -> Page {
    let m = &doc.manifest;
    let inv = m.investigator.arm.as_str();
    let classes = model::class_rows(doc);
    let (ok, verdict) = verdict(doc);
    let drills: Vec<Drill> = doc.trials.iter().map(|t| drill::build(t, dir)).collect();
    let pair = |key: String, value: String| Pair { key, value };
    Page {
        title: format!("Battery: {inv} vs baseline"),
        investigator: inv.to_string(),
        manifest_line: model::manifest_line_with(m, str::to_string),
        ok,
        verdict,
        any_underpowered: classes.iter().any(|r| r.underpowered),
        classes,
        effects: model::largest_effects(doc, 3),
        controls: model::controls(doc),
        arms: m
            .arms
            .iter()
            .filter_map(|a| {
                doc.overall
                    .arms
                    .get(a.as_str())
                    .map(|s| arm_row(a.as_str(), s))
            })
            .collect(),
        infra: model::infra(doc)
            .iter()
            .map(|t| {
                let e = t.infra.as_ref().map_or(String::new(), |i| i.error.clone());
                pair(t.id.clone(), e)
            })
            .collect(),
        contaminated: model::contaminated(doc)
            .iter()
            .map(|t| pair(t.id.clone(), t.contamination.join(", ")))
            .collect(),
        not_run: doc
            .not_run
            .iter()
            .map(|n| pair(n.id.clone(), n.reason.clone()))
            .collect(),
        nondeterministic: doc.nondeterministic.clone(),
        seal_changed: (doc.label_seal_after != m.label_seal)
            .then(|| pair(m.label_seal.clone(), doc.label_seal_after.clone())),
        complete: doc.complete,
        trials: doc.trials.iter().map(trial_row).collect(),
        kept_runs: drills.iter().filter(|d| d.run.kept).count(),
        drills,
        manifest: manifest_pairs(doc),
        seed: m.seed,
        resamples: RESAMPLES,
        alpha: ALPHA,
    }
}

/// report.html of one battery; `dir` is where its `runs/` would be.
///
/// # Errors
///
/// A template that fails to render, or a chart that cannot be drawn.
pub fn render(doc: &ResultsDoc, dir: &Path) -> Result<String, ReportError> {
    let p = page(doc, dir);
    let accuracy = charts::accuracy(doc, &p.classes)?;
    let cost = charts::cost(doc)?;
    render_template(
        "report.html",
        context! {
            page => Value::from(Serde(&p)),
            accuracy_svg => Value::from_safe_string(accuracy),
            cost_svg => Value::from_safe_string(cost),
        },
    )
}

/// The HTML of `report diff`.
///
/// # Errors
///
/// A template that fails to render.
pub fn render_diff(d: &Diff) -> Result<String, ReportError> {
    render_template(
        "diff.html",
        context! {
            d => Value::from(Serde(d)),
            resamples => RESAMPLES,
        },
    )
}
