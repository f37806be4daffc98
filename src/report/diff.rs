//! `report diff A B`: what changed between two battery runs on the scenarios both ran.
//!
//! Invariant: two runs are compared only when they share the corpus digest and the label
//! seal (else refused, naming the fields, unless forced); the change per class is B − A
//! investigator accuracy with the same paired, seeded bootstrap the battery uses for its
//! contribution ([`stats::bootstrap_contribution`], A as the first arm, B as the second),
//! so a diff is as reproducible as the runs.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::Loaded;
use super::ReportError;
use super::model::{self, pct, points};
use crate::battery::results::ResultsDoc;
use crate::battery::stats::{self, PairedScenario};
use crate::battery::summary::{RESAMPLES, class_seed, right};

/// Manifest fields two runs must share to be compared at all.
pub const MUST_MATCH: [&str; 2] = ["corpusDigest", "labelSeal"];

/// One run of the two.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// The path as given.
    pub path: String,
    pub investigator: String,
    pub manifest_line: String,
    /// Where that run's report.html is, for links to its drill-downs.
    pub report: String,
}

/// A manifest field that differs.
#[derive(Debug, Clone, Serialize)]
pub struct FieldDiff {
    pub field: String,
    pub a: String,
    pub b: String,
}

/// The change of one class (or `overall`).
#[derive(Debug, Clone, Serialize)]
pub struct ClassChange {
    pub class: String,
    /// Scenarios both runs' investigators ran (and did not fail for infrastructure).
    pub scenarios: usize,
    pub a: String,
    pub b: String,
    pub a_accuracy: Option<f64>,
    pub b_accuracy: Option<f64>,
    /// B − A, with its paired bootstrap interval, as fractions.
    pub estimate: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// `+20 [+0, +40]`.
    pub change: String,
    /// `better`, `worse` or `no detectable change`.
    pub verdict: &'static str,
    /// Mean cost and tokens per trial of each run's investigator, and the change.
    pub cost_change: String,
    pub token_change: String,
}

/// A scenario whose investigator outcome flipped.
#[derive(Debug, Clone, Serialize)]
pub struct Flip {
    pub scenario: String,
    pub class: String,
    /// Links to the drill-downs in each run's report.html.
    pub a_link: String,
    pub b_link: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub a: Side,
    pub b: Side,
    pub seed: u64,
    /// Must-match fields that differ, compared anyway (`--force`).
    pub forced: Vec<FieldDiff>,
    /// Every other comparable manifest field that differs (what the comparison is about).
    pub differences: Vec<FieldDiff>,
    pub classes: Vec<ClassChange>,
    pub overall: ClassChange,
    pub right_to_wrong: Vec<Flip>,
    pub wrong_to_right: Vec<Flip>,
    /// Scenarios only one run's investigator ran.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn side(l: &Loaded) -> Side {
    let m = &l.doc.manifest;
    Side {
        path: l.given.display().to_string(),
        investigator: m.investigator.arm.to_string(),
        manifest_line: model::manifest_line_with(m, str::to_string),
        report: l
            .dir
            .join(super::REPORT_HTML)
            .display()
            .to_string()
            .trim_start_matches("./")
            .to_string(),
    }
}

/// Per scenario, the investigator's counted outcomes (right or not), its class, the id of
/// its first trial, and its cost and tokens.
#[derive(Default)]
struct Outcomes<'a> {
    class: &'a str,
    first: &'a str,
    right: Vec<bool>,
    cost: Vec<f64>,
    tokens: Vec<f64>,
}

fn outcomes(doc: &ResultsDoc) -> BTreeMap<&str, Outcomes<'_>> {
    let inv = doc.manifest.investigator.arm;
    let mut out: BTreeMap<&str, Outcomes> = BTreeMap::new();
    for t in doc.trials.iter().filter(|t| t.arm == inv && t.counted()) {
        let o = out.entry(&t.scenario).or_insert_with(|| Outcomes {
            class: &t.class,
            first: &t.id,
            ..Outcomes::default()
        });
        o.right.push(right(t));
        o.cost.push(t.cost_usd);
        o.tokens.push((t.tokens_in + t.tokens_out) as f64);
    }
    out
}

fn majority(xs: &[bool]) -> bool {
    2 * xs.iter().filter(|&&x| x).count() > xs.len()
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

fn tokens(x: f64) -> String {
    if x.abs() >= 1000.0 {
        format!("{:.1}k", x / 1000.0)
    } else {
        format!("{x:.0}")
    }
}

fn change_of<F: Fn(f64) -> String>(a: Option<f64>, b: Option<f64>, f: F) -> String {
    match (a, b) {
        (Some(a), Some(b)) if f(a) == f(b) => format!("{} (same)", f(a)),
        (Some(a), Some(b)) => {
            let d = b - a;
            let sign = if d < 0.0 { "−" } else { "+" };
            format!("{} → {} ({sign}{})", f(a), f(b), f(d.abs()))
        }
        _ => "—".into(),
    }
}

fn class_change(class: &str, pairs: &[(&Outcomes, &Outcomes)], seed: u64) -> ClassChange {
    let share = |xs: Vec<bool>| {
        let n = xs.len();
        (n > 0).then(|| xs.iter().filter(|&&x| x).count() as f64 / n as f64)
    };
    let a_acc = share(pairs.iter().flat_map(|(a, _)| a.right.clone()).collect());
    let b_acc = share(pairs.iter().flat_map(|(_, b)| b.right.clone()).collect());
    let paired: Vec<PairedScenario> = pairs
        .iter()
        .map(|(a, b)| PairedScenario {
            scenario: a.first.to_string(),
            baseline: a.right.clone(),
            arm: b.right.clone(),
        })
        .collect();
    let interval = stats::bootstrap_contribution(&paired, class_seed(seed, class), RESAMPLES);
    let verdict = match &interval {
        Some(i) if i.low > 0.0 => "better",
        Some(i) if i.high < 0.0 => "worse",
        Some(_) => "no detectable change",
        None => "no scenario in both",
    };
    let cost = |first: bool| {
        mean(pairs.iter().flat_map(|(a, b)| {
            let o = if first { a } else { b };
            o.cost.iter().copied()
        }))
    };
    let toks = |first: bool| {
        mean(pairs.iter().flat_map(|(a, b)| {
            let o = if first { a } else { b };
            o.tokens.iter().copied()
        }))
    };
    ClassChange {
        class: class.to_string(),
        scenarios: pairs.len(),
        a: pct(a_acc),
        b: pct(b_acc),
        a_accuracy: a_acc,
        b_accuracy: b_acc,
        estimate: interval.as_ref().map(|i| i.estimate),
        low: interval.as_ref().map(|i| i.low),
        high: interval.as_ref().map(|i| i.high),
        change: interval.as_ref().map_or("—".into(), |i| {
            format!(
                "{} [{}, {}]",
                points(i.estimate),
                points(i.low),
                points(i.high)
            )
        }),
        verdict,
        cost_change: change_of(cost(true), cost(false), model::usd),
        token_change: change_of(toks(true), toks(false), tokens),
    }
}

/// The manifest fields two runs differ in: those that must match (an error unless `force`,
/// else listed as forced) and the rest, a nested field named down to what differs.
fn manifest_fields(
    a: &Loaded,
    b: &Loaded,
    force: bool,
) -> Result<(Vec<FieldDiff>, Vec<FieldDiff>), ReportError> {
    let (ma, mb) = (&a.doc.manifest, &b.doc.manifest);
    let all = ma.differences(mb, &[]);
    let (must, other): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|(f, _, _)| MUST_MATCH.contains(&f.as_str()));
    let field = |(f, x, y): (String, Value, Value)| FieldDiff {
        field: f,
        a: show(&x),
        b: show(&y),
    };
    let forced: Vec<FieldDiff> = must.into_iter().map(field).collect();
    if !forced.is_empty() && !force {
        let named: Vec<String> = forced
            .iter()
            .map(|f| format!("`{}` is {} in A and {} in B", f.field, f.a, f.b))
            .collect();
        return Err(ReportError::Incompatible(format!(
            "`{}` and `{}` ran on different inputs: {}; their scores are not comparable (use --force to compare anyway)",
            a.given.display(),
            b.given.display(),
            named.join("; ")
        )));
    }
    // A nested field (the investigator, the tool limits) is named down to what differs.
    let mut differences = Vec::new();
    for (f, x, y) in other {
        match (&x, &y) {
            (Value::Object(xa), Value::Object(ya)) => {
                let keys: std::collections::BTreeSet<&String> =
                    xa.keys().chain(ya.keys()).collect();
                for k in keys {
                    let (u, v) = (
                        xa.get(k).unwrap_or(&Value::Null),
                        ya.get(k).unwrap_or(&Value::Null),
                    );
                    if u != v {
                        differences.push(field((format!("{f}.{k}"), u.clone(), v.clone())));
                    }
                }
            }
            _ => differences.push(field((f, x, y))),
        }
    }
    Ok((forced, differences))
}

/// Compares two loaded runs; refuses differing corpus digests or label seals unless `force`.
///
/// # Errors
///
/// [`ReportError::Incompatible`] naming every manifest field that must match and does not,
/// unless `force`.
pub fn diff(a: &Loaded, b: &Loaded, force: bool) -> Result<Diff, ReportError> {
    let (forced, differences) = manifest_fields(a, b, force)?;
    let (oa, ob) = (outcomes(&a.doc), outcomes(&b.doc));
    let (sa, sb) = (side(a), side(b));
    let mut by_class: BTreeMap<&str, Vec<(&Outcomes, &Outcomes)>> = BTreeMap::new();
    let mut right_to_wrong = Vec::new();
    let mut wrong_to_right = Vec::new();
    for (scenario, x) in &oa {
        let Some(y) = ob.get(scenario) else { continue };
        by_class.entry(x.class).or_default().push((x, y));
        let flip = || Flip {
            scenario: scenario.to_string(),
            class: x.class.to_string(),
            a_link: format!("{}#{}", sa.report, model::anchor(x.first)),
            b_link: format!("{}#{}", sb.report, model::anchor(y.first)),
        };
        match (majority(&x.right), majority(&y.right)) {
            (true, false) => right_to_wrong.push(flip()),
            (false, true) => wrong_to_right.push(flip()),
            _ => {}
        }
    }
    let seed = a.doc.manifest.seed;
    let classes = by_class
        .iter()
        .map(|(class, pairs)| class_change(class, pairs, seed))
        .collect();
    let everything: Vec<(&Outcomes, &Outcomes)> = by_class.into_values().flatten().collect();
    let overall = class_change("overall", &everything, seed);
    let only = |x: &BTreeMap<&str, Outcomes>, y: &BTreeMap<&str, Outcomes>| -> Vec<String> {
        x.keys()
            .filter(|s| !y.contains_key(*s))
            .map(std::string::ToString::to_string)
            .collect()
    };
    Ok(Diff {
        only_a: only(&oa, &ob),
        only_b: only(&ob, &oa),
        a: sa,
        b: sb,
        seed,
        forced,
        differences,
        classes,
        overall,
        right_to_wrong,
        wrong_to_right,
    })
}

/// Loads two runs and compares them.
///
/// # Errors
///
/// A results document that cannot be read, or any error of [`diff`].
pub fn diff_paths(a: &Path, b: &Path, force: bool) -> Result<Diff, ReportError> {
    diff(&super::load(a)?, &super::load(b)?, force)
}
