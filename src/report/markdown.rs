//! report.md: GitHub-flavoured markdown short enough for a pull-request comment.
//!
//! Invariant: every figure comes from [`super::model`]; text from results.json (class
//! names, reasons, errors) is escaped for a table cell or inline code before it is written.

use std::fmt::Write as _;

use super::diff::Diff;
use super::model::{self, ClassRow};
use crate::battery::results::ResultsDoc;
use crate::battery::summary::{ALPHA, RESAMPLES};

/// The most trials a list names before it says how many more there are.
const LIST_MAX: usize = 10;

/// Text safe inside a table cell: no pipe, no line break.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// Text safe inside inline code (a backtick would end it).
fn code(s: &str) -> String {
    format!("`{}`", s.replace('`', "'").replace(['\r', '\n'], " "))
}

fn list(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n**{title}** ({}):\n", items.len());
    for i in items.iter().take(LIST_MAX) {
        let _ = writeln!(out, "* {}", cell(i));
    }
    if items.len() > LIST_MAX {
        let _ = writeln!(
            out,
            "* … and {} more (see report.html)",
            items.len() - LIST_MAX
        );
    }
}

fn class_table(out: &mut String, rows: &[ClassRow], investigator: &str) {
    let _ = writeln!(
        out,
        "| class | n | baseline | {} | contribution [95% CI] | p (Holm) | harmful@auto | cost |",
        cell(investigator)
    );
    out.push_str("| :-- | --: | --: | --: | :-- | --: | --: | --: |\n");
    for r in rows {
        let name = if r.overall {
            "**overall**".to_string()
        } else {
            format!(
                "{}{}",
                code(&r.class),
                if r.underpowered { " †" } else { "" }
            )
        };
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {}{} | {} | {} |",
            r.n,
            r.baseline,
            r.investigator,
            r.contribution,
            r.p_holm,
            if r.significant { " *" } else { "" },
            r.harmful_at_auto,
            r.cost
        );
    }
}

/// report.md of one battery.
#[must_use]
pub fn render(doc: &ResultsDoc) -> String {
    let m = &doc.manifest;
    let inv = m.investigator.arm.as_str();
    let rows = model::class_rows(doc);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Battery: {inv} vs baseline, {} scenarios\n",
        doc.overall.n
    );
    let _ = writeln!(out, "{}\n", model::manifest_line(m));
    class_table(&mut out, &rows, inv);
    let _ = writeln!(
        out,
        "\nContribution: {inv} − baseline accuracy in points, paired bootstrap 95% interval \
         ({RESAMPLES} resamples, seed {}). p: exact McNemar, Holm-adjusted across classes \
         (overall unadjusted); * significant at α {ALPHA}.",
        m.seed
    );
    if rows.iter().any(|r| r.underpowered) {
        out.push_str(
            "† underpowered: too few scenarios to detect a 30-point difference (α 0.05, power 0.8).\n",
        );
    }

    largest_effects(&mut out, doc);
    controls(&mut out, doc);
    exceptions(&mut out, doc);
    out
}

/// The three largest per-class effects, in words.
fn largest_effects(out: &mut String, doc: &ResultsDoc) {
    let effects = model::largest_effects(doc, 3);
    if !effects.is_empty() {
        let words: Vec<String> = effects
            .iter()
            .map(|e| {
                let mut s = format!("{}: {}", code(&e.class), e.text);
                if e.significant {
                    s.push_str(" (significant)");
                }
                if e.underpowered {
                    s.push_str(" †");
                }
                s
            })
            .collect();
        let _ = writeln!(out, "\n**Largest effects:** {}.", words.join("; "));
    }
}

/// The controls' verdicts, each with the scenarios it names.
fn controls(out: &mut String, doc: &ResultsDoc) {
    let controls = model::controls(doc);
    if !controls.is_empty() {
        out.push_str("\n**Controls:**\n\n");
        for c in &controls {
            let _ = writeln!(out, "* {}", cell(&c.text));
            for n in c.named.iter().take(LIST_MAX) {
                let _ = writeln!(out, "  * {}", cell(n));
            }
        }
    }
}

/// What did not go as planned: infrastructure failures, contamination, trials not run,
/// self-disagreeing arms, a changed label set, an incomplete run.
fn exceptions(out: &mut String, doc: &ResultsDoc) {
    let m = &doc.manifest;
    let infra: Vec<String> = model::infra(doc)
        .iter()
        .map(|t| {
            let e = t.infra.as_ref().map_or("", |i| i.error.as_str());
            format!("{}: {e}", code(&t.id))
        })
        .collect();
    let contaminated: Vec<String> = model::contaminated(doc)
        .iter()
        .map(|t| format!("{} (canary in {})", code(&t.id), t.contamination.join(", ")))
        .collect();
    if infra.is_empty() && contaminated.is_empty() {
        out.push_str("\nNo infrastructure failures; no contaminated trials.\n");
    } else {
        list(
            out,
            "Infrastructure failures, left out of every denominator",
            &infra,
        );
        list(out, "Contaminated trials, counted wrong", &contaminated);
    }
    let not_run: Vec<String> = doc
        .not_run
        .iter()
        .map(|n| format!("{}: {}", code(&n.id), n.reason))
        .collect();
    list(out, "Not run", &not_run);
    let nondet: Vec<String> = doc.nondeterministic.iter().map(|s| code(s)).collect();
    list(
        out,
        "Deterministic arms that disagreed with themselves",
        &nondet,
    );
    if doc.label_seal_after != m.label_seal {
        let _ = writeln!(
            out,
            "\n**The label set changed during the run** (seal {} before, {} after): the scores are void.",
            code(&m.label_seal),
            code(&doc.label_seal_after)
        );
    }
    if !doc.complete {
        out.push_str("\n**Incomplete:** not every planned trial finished.\n");
    }
}

/// The markdown of `report diff`.
#[must_use]
pub fn render_diff(d: &Diff) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Battery diff: {} → {}, {} scenarios in both\n",
        d.a.investigator, d.b.investigator, d.overall.scenarios
    );
    let _ = writeln!(out, "* A: {} ({})", code(&d.a.path), d.a.manifest_line);
    let _ = writeln!(out, "* B: {} ({})", code(&d.b.path), d.b.manifest_line);
    if !d.forced.is_empty() {
        let _ = writeln!(
            out,
            "\n**Compared with --force although these differ:** {}.",
            d.forced
                .iter()
                .map(|f| format!("{} ({} vs {})", code(&f.field), f.a, f.b))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if !d.differences.is_empty() {
        out.push_str("\nWhat differs between the runs:\n\n");
        for f in &d.differences {
            let _ = writeln!(out, "* {}: {} → {}", code(&f.field), code(&f.a), code(&f.b));
        }
    }
    diff_table(&mut out, d);
    flipped(&mut out, d);
    if !d.only_a.is_empty() || !d.only_b.is_empty() {
        let _ = writeln!(
            out,
            "\nLeft out (ran in one run only): {} in A, {} in B.",
            d.only_a.len(),
            d.only_b.len()
        );
    }
    out
}

/// The per-class table of `report diff`, overall last, and what its change column means.
fn diff_table(out: &mut String, d: &Diff) {
    out.push_str(
        "\n| class | n | A | B | change [95% CI] | verdict | cost/trial | tokens/trial |\n",
    );
    out.push_str("| :-- | --: | --: | --: | :-- | :-- | --: | --: |\n");
    for c in d.classes.iter().chain(std::iter::once(&d.overall)) {
        let name = if c.class == "overall" {
            "**overall**".to_string()
        } else {
            code(&c.class)
        };
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            c.scenarios, c.a, c.b, c.change, c.verdict, c.cost_change, c.token_change
        );
    }
    let _ = writeln!(
        out,
        "\nChange: B − A accuracy of the investigator on the scenarios both ran, in points, \
         paired bootstrap 95% interval ({RESAMPLES} resamples, seed {}); a change is detectable \
         when its interval excludes 0.",
        d.seed
    );
}

/// The scenarios whose outcome flipped between the runs, long lists folded away.
fn flipped(out: &mut String, d: &Diff) {
    for (title, flips) in [
        ("Right → wrong", &d.right_to_wrong),
        ("Wrong → right", &d.wrong_to_right),
    ] {
        if flips.is_empty() {
            let _ = writeln!(out, "\n**{title}:** none.");
            continue;
        }
        let _ = writeln!(out, "\n**{title}** ({}):\n", flips.len());
        // A long list folds away so the comment stays short.
        let fold = flips.len() > LIST_MAX;
        if fold {
            let _ = writeln!(
                out,
                "<details><summary>{} scenarios</summary>\n",
                flips.len()
            );
        }
        for f in flips {
            let _ = writeln!(
                out,
                "* {} ([A]({}), [B]({}))",
                code(&f.scenario),
                f.a_link.replace(' ', "%20"),
                f.b_link.replace(' ', "%20")
            );
        }
        if fold {
            out.push_str("\n</details>\n");
        }
    }
}
