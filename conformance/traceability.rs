//! Traceability: every catalogued rule has a trial, every trial names only catalogued
//! rules, and the catalogue's `R-` ids are exactly the ids of the shared rule list.
//!
//! The shared list is `../shared/RULES.md` beside the checkout (or `ANVIL_RULES_MD`). A
//! clone without it says so on stderr and compares only the catalogue with the trials: the
//! list is a document of the team's, not part of the crate, and a clone on its own (as CI's
//! may be) must still pass. Set `ANVIL_RULES_MD` to hold a clone to a list elsewhere.

use std::collections::BTreeSet;
use std::path::PathBuf;

use libtest_mimic::Failed;

use crate::{Check, catalogue};

/// The problems behind `traceability::every_catalogued_rule_has_a_trial`.
pub fn check(checks: &[Check]) -> Result<(), Failed> {
    let mut problems = Vec::new();
    for (id, _) in catalogue::RULES {
        if !checks.iter().any(|c| c.rules.contains(id)) {
            problems.push(format!("{id} has no trial"));
        }
    }
    for c in checks {
        if c.rules.is_empty() {
            problems.push(format!("{} declares no rule", c.name));
        }
        for r in c.rules {
            if !catalogue::RULES.iter().any(|(id, _)| id == r) {
                problems.push(format!("{} names uncatalogued rule {r}", c.name));
            }
        }
    }
    problems.extend(against_rules_md());
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// Where the shared rule list is expected.
fn rules_md_path() -> PathBuf {
    match std::env::var_os("ANVIL_RULES_MD") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/RULES.md"),
    }
}

/// The catalogue against RULES.md: an id listed there and not catalogued, or a catalogued
/// `R-` id it does not list (project additions are `X-` ids), is a problem.
fn against_rules_md() -> Vec<String> {
    let path = rules_md_path();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            let why = format!(
                "the shared rule list `{}` cannot be read: {e}",
                path.display()
            );
            // A list named explicitly must be there; the default one may be absent.
            if std::env::var_os("ANVIL_RULES_MD").is_some() {
                return vec![why];
            }
            eprintln!("note: {why}; the catalogue was not compared with it");
            return Vec::new();
        }
    };
    let listed = rule_ids(&text);
    if listed.is_empty() {
        return vec![format!("no rule ids found in `{}`", path.display())];
    }
    let catalogued: BTreeSet<&str> = catalogue::RULES
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| id.starts_with("R-"))
        .collect();
    let mut problems: Vec<String> = listed
        .difference(&catalogued)
        .map(|id| format!("{id} is in {} but not in the catalogue", path.display()))
        .collect();
    problems.extend(
        catalogued
            .difference(&listed)
            .map(|id| format!("{id} is catalogued but not in {}", path.display())),
    );
    problems
}

/// The ids of RULES.md: the first word of each `- R-AREA-N …` list item.
fn rule_ids(text: &str) -> BTreeSet<&str> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|id| is_rule_id(id))
        .collect()
}

fn is_rule_id(word: &str) -> bool {
    let mut parts = word.split('-');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some("R"), Some(area), Some(n), None)
            if !area.is_empty()
                && area.bytes().all(|b| b.is_ascii_uppercase())
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
    )
}
