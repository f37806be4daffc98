//! `--format junit`: one testcase per trial, one testsuite per class, so CI dashboards that
//! read JUnit show the battery.
//!
//! Invariant: a trial fails exactly when the report marks it red ([`model::passed`]); a
//! failure carries what was expected and what the case got, and an infrastructure failure
//! is a JUnit `error`, not a failure, as it is left out of every score.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use minijinja::context;
use minijinja::value::{Serde, Value};
use serde::Serialize;

use super::ReportError;
use super::model;
use crate::battery::results::{ResultsDoc, TrialRecord};

#[derive(Debug, Serialize)]
struct Case {
    name: String,
    time: String,
    failure: bool,
    error: bool,
    kind: &'static str,
    message: String,
    detail: String,
}

#[derive(Debug, Serialize)]
struct Suite {
    name: String,
    failures: usize,
    errors: usize,
    time: String,
    cases: Vec<Case>,
}

fn seconds(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

fn expected_got(t: &TrialRecord) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "expected: {}",
        t.expected.as_ref().map_or_else(
            || t.expected_status.clone().unwrap_or_default(),
            std::string::ToString::to_string
        )
    );
    let got = t
        .patch
        .as_ref()
        .map(|p| serde_json::to_string(p).unwrap_or_default());
    let _ = writeln!(
        s,
        "got: {}{}",
        t.status.as_deref().unwrap_or("no result"),
        got.map(|p| format!(" {p}")).unwrap_or_default()
    );
    if let Some(tier) = &t.tier {
        let _ = writeln!(s, "tier: {tier}");
    }
    if let Some(r) = &t.reason {
        let _ = writeln!(s, "reason: {r}");
    }
    if !t.contamination.is_empty() {
        let _ = writeln!(s, "canary found in: {}", t.contamination.join(", "));
    }
    s
}

fn case(t: &TrialRecord) -> Case {
    let outcome = model::outcome(t);
    let expected = t.expected_status.as_deref().unwrap_or("?");
    let got = t.status.as_deref().unwrap_or("no result");
    let (failure, error, kind, message) = match outcome {
        "infra" => (
            false,
            true,
            "infrastructure",
            t.infra.as_ref().map_or(String::new(), |i| {
                format!("{} (after {} attempts)", i.error, i.attempts)
            }),
        ),
        "contaminated" => (
            true,
            false,
            "contaminated",
            format!(
                "a label's canary was found in {}",
                t.contamination.join(", ")
            ),
        ),
        "FAILED" if t.arm.is_control() && t.arm != crate::battery::Arm::Oracle => (
            true,
            false,
            "control",
            "the cheater was not flagged contaminated".to_string(),
        ),
        _ if model::passed(t) => (false, false, "", String::new()),
        _ => {
            let what = if t.status_correct {
                "wrong values"
            } else {
                "wrong status"
            };
            (
                true,
                false,
                "wrong",
                format!("{what}: expected {expected}, got {got}"),
            )
        }
    };
    Case {
        name: t.id.clone(),
        time: seconds(t.wall_ms),
        failure,
        error,
        kind,
        message,
        detail: if failure || error {
            expected_got(t)
        } else {
            String::new()
        },
    }
}

/// The JUnit XML of one battery.
///
/// # Errors
///
/// [`ReportError::Render`] when the template fails to render.
pub fn render(doc: &ResultsDoc) -> Result<String, ReportError> {
    let mut by_class: BTreeMap<&str, Vec<&TrialRecord>> = BTreeMap::new();
    for t in &doc.trials {
        by_class.entry(&t.class).or_default().push(t);
    }
    let suites: Vec<Suite> = by_class
        .into_iter()
        .map(|(class, trials)| {
            let cases: Vec<Case> = trials.iter().map(|t| case(t)).collect();
            Suite {
                name: class.to_string(),
                failures: cases.iter().filter(|c| c.failure).count(),
                errors: cases.iter().filter(|c| c.error).count(),
                time: seconds(trials.iter().map(|t| t.wall_ms).sum()),
                cases,
            }
        })
        .collect();
    let ctx = context! {
        name => format!("anvil-bench battery: {}", doc.manifest.investigator.arm),
        tests => doc.trials.len(),
        failures => suites.iter().map(|s| s.failures).sum::<usize>(),
        errors => suites.iter().map(|s| s.errors).sum::<usize>(),
        time => seconds(doc.trials.iter().map(|t| t.wall_ms).sum()),
        suites => Value::from(Serde(&suites)),
    };
    super::html::render_template("junit.xml", ctx)
}
