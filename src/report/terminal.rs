//! The summary a battery prints when it ends: the per-class table, the controls and the
//! trials a reader must know about, as plain text for a terminal.
//!
//! Invariant: the same rows as report.md and report.html ([`super::model`]).

use std::fmt::Write as _;

use tabled::{builder::Builder, settings::Style};

use super::model;
use crate::battery::results::ResultsDoc;

/// The per-class table, the controls and the infrastructure failures.
#[must_use]
pub fn summary(doc: &ResultsDoc) -> String {
    let inv = doc.manifest.investigator.arm;
    let mut b = Builder::default();
    b.push_record([
        "class".to_string(),
        "n".into(),
        "baseline".into(),
        inv.to_string(),
        "contribution [95% CI]".into(),
        "p (Holm)".into(),
        "harmful@auto".into(),
        "cost".into(),
    ]);
    for r in model::class_rows(doc) {
        b.push_record([
            format!(
                "{}{}",
                r.class,
                if r.underpowered {
                    " (underpowered)"
                } else {
                    ""
                }
            ),
            r.n.to_string(),
            r.baseline,
            r.investigator,
            r.contribution,
            format!("{}{}", r.p_holm, if r.significant { " *" } else { "" }),
            r.harmful_at_auto,
            r.cost,
        ]);
    }
    let mut out = format!("{}\n", b.build().with(Style::sharp()));
    for c in model::controls(doc) {
        let _ = writeln!(out, "{}", c.text);
        let prefix = if c.name == "oracle" {
            "not reached"
        } else {
            "NOT FLAGGED"
        };
        for n in &c.named {
            let _ = writeln!(out, "  {prefix}: {n}");
        }
    }
    let contaminated: Vec<&str> = model::contaminated(doc)
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    if !contaminated.is_empty() {
        let _ = writeln!(
            out,
            "contaminated (counted wrong): {}",
            contaminated.join(", ")
        );
    }
    let infra = model::infra(doc);
    if !infra.is_empty() {
        out.push_str("infrastructure failures (left out of every denominator):\n");
        for t in infra {
            if let Some(i) = &t.infra {
                let _ = writeln!(out, "  {}: {}", t.id, i.error);
            }
        }
    }
    if !doc.not_run.is_empty() {
        let _ = writeln!(out, "not run: {} trials", doc.not_run.len());
    }
    out
}
