//! The engine's gate at close (R-GATE-1, R-GATE-2): a patched value reaches `auto` only
//! when the lines its grounding claims cite state it, at the skill's strength bar, and no
//! two verified frozen excerpts state different values for its predicate — nor does any
//! in-scope file of the repository as committed, cited or not: a value the repository
//! contradicts somewhere is for a human to weigh, whoever investigated.
//!
//! Invariant: recomputed at close from the frozen, re-verified evidence and the contract in
//! case.json; every value gets a [`GateCheck`] in close.json saying which rule matched
//! which line, or that none did.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::case::attest::{
    AttestStatus, AttestedConflict, AttestedLine, Attester, ClaimAttestation,
};
use crate::case::claim::RawClaim;
use crate::case::frozen::Frozen;

/// The gate's verdict on one patched (or proven) value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateCheck {
    pub field: String,
    pub predicate: String,
    pub value: Value,
    /// The accepted grounding claims asserting the value.
    pub claim_ids: Vec<String>,
    pub attestation: AttestStatus,
    /// Attested strength (verified lines only when the field needs verified grounding).
    pub strength: f64,
    /// The skill's minimum strength, which the attesting lines must reach for `auto`.
    pub required: f64,
    pub lines: Vec<AttestedLine>,
    pub note: String,
    /// Verified excerpts stating different values for the predicate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<AttestedConflict>,
    /// True when nothing here keeps the value from `auto`.
    pub passes: bool,
}

/// The repository's conflict on `predicate` that states a value other than `value`: one
/// on another predicate says nothing about this value.
fn uncited_conflict<'c>(
    repo: &'c [AttestedConflict],
    predicate: &str,
    value: &Value,
) -> Option<&'c AttestedConflict> {
    repo.iter()
        .find(|c| c.predicate == predicate && c.values.iter().any(|v| v != value))
}

/// Checks every `(field, value)` against the claims in `grounding` and pushes the reason
/// for each failure onto `reasons`.
pub fn check(
    frozen: &Frozen,
    set: &serde_json::Map<String, Value>,
    grounding: &BTreeMap<String, Vec<String>>,
    reasons: &mut Vec<String>,
) -> Vec<GateCheck> {
    let case = &frozen.run.doc;
    let contract = &case.policy.contract;
    let attester = Attester::new(case);
    let accepted: Vec<_> = frozen
        .claims
        .claims
        .iter()
        .filter(|c| frozen.research.accepted(&c.id))
        .collect();
    let claimed = claimed_values(&accepted);
    let conflicts = attester.conflicts(&frozen.evidence, &claimed);
    let (whole, scanned) = repository_excerpts(frozen);
    let repo_conflicts = attester.conflicts(&whole, &claimed);
    let mut out = Vec::new();
    for (field, value) in set {
        let predicate = contract
            .predicate_for_field(field)
            .unwrap_or_default()
            .to_string();
        let ids = grounding.get(field).cloned().unwrap_or_default();
        let claims: Vec<_> = accepted
            .iter()
            .copied()
            .filter(|c| ids.contains(&c.id) && c.predicate == predicate && &c.value == value)
            .collect();
        let a = attest(&attester, &predicate, value, &claims, frozen);
        let strength = attester.gate_strength(&predicate, &a);
        let required = contract.minimum_strength;
        let conflict = conflicts.iter().find(|c| c.predicate == predicate).cloned();
        // The repository as committed, beyond what was cited: a line stating another value.
        let uncited = uncited_conflict(&repo_conflicts, &predicate, value)
            .filter(|_| conflict.is_none())
            .cloned();

        if !a.attested() {
            reasons.push(format!(
                "`{field}` = {value} is not stated by the lines its claims cite (R-GATE-1): {}",
                a.note
            ));
        } else if strength < required {
            reasons.push(format!(
                "`{field}` = {value} is stated only at strength {strength} < {required} (a comment counts as comment evidence unless it documents code naming the target): {}",
                a.note
            ));
        }
        if let Some(c) = &conflict {
            reasons.push(format!(
                "verified excerpts state different values for `{predicate}` (R-GATE-2): {}",
                c.note
            ));
        }
        if let Some(c) = &uncited {
            reasons.push(format!(
                "the repository states different values for `{predicate}` in lines no claim cites (R-GATE-2, {scanned}): {}",
                c.note
            ));
        }
        let conflict = conflict.or(uncited);
        out.push(GateCheck {
            field: field.clone(),
            passes: a.attested() && strength >= required && conflict.is_none(),
            predicate,
            value: value.clone(),
            claim_ids: claims.iter().map(|c| c.id.clone()).collect(),
            attestation: a.status,
            strength,
            required,
            lines: a.lines,
            note: a.note,
            conflict,
        });
    }
    out
}

/// Each predicate's distinct values among the accepted claims, in the order first claimed.
fn claimed_values(accepted: &[&RawClaim]) -> BTreeMap<String, Vec<Value>> {
    let mut claimed: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for c in accepted {
        let list = claimed.entry(c.predicate.clone()).or_default();
        if !list.contains(&c.value) {
            list.push(c.value.clone());
        }
    }
    claimed
}

/// Whether the frozen evidence the `claims` cite states `value` for `predicate`;
/// unattested when the skill has no attestation rules for the predicate.
fn attest(
    attester: &Attester,
    predicate: &str,
    value: &Value,
    claims: &[&RawClaim],
    frozen: &Frozen,
) -> ClaimAttestation {
    attester
        .attest(predicate, value, claims, &frozen.evidence)
        .unwrap_or_else(|| ClaimAttestation {
            status: AttestStatus::Unattested,
            strength: 0.0,
            verified_strength: 0.0,
            lines: vec![],
            note: format!("the skill has no attestation rules for `{predicate}`"),
        })
}

/// How much of the repository the whole-repository scan reads at close.
#[derive(Debug, Clone, Copy)]
struct ScanBudget {
    /// Most in-scope files.
    files: usize,
    /// Most bytes in all.
    bytes: u64,
}

const SCAN: ScanBudget = ScanBudget {
    files: 5_000,
    bytes: 64 << 20,
};

/// Every in-scope text file of the repository as the case may cite it (committed at its
/// revision, or as recorded at open), each as one whole-file verified excerpt, within
/// [`SCAN`]; with a description of what was scanned for close.json.
fn repository_excerpts(frozen: &Frozen) -> (crate::case::evidence::EvidenceDoc, String) {
    use crate::case::evidence::{EvidenceDoc, EvidenceRequest, acquire};
    let mut doc = EvidenceDoc::empty();
    let run = &frozen.run;
    let Ok(source) = crate::case::citable::evidence_source(run) else {
        return (doc, "the repository could not be read".into());
    };
    let repo = std::path::Path::new(&run.doc.inputs.repository);
    let policy = &run.doc.policy;
    let (files, truncated) = within_budget(
        |limit| crate::case::evidence::in_scope_files(repo, &policy.inspect_scopes, limit),
        SCAN,
    );
    let mut read = 0usize;
    for rel in files {
        let req = EvidenceRequest {
            path: rel,
            start_line: None,
            end_line: None,
        };
        // Every kind: a document stating another value matters as much as code.
        let kinds = crate::skill::EvidenceKind::ALL;
        if let Ok(a) = acquire(repo, &source, &policy.inspect_scopes, &kinds, &req, "") {
            read += 1;
            doc.insert(a);
        }
    }
    (doc, scan_note(read, truncated, SCAN))
}

/// The files (in listing order) the scan reads within `budget`, and whether the budget
/// left any in-scope file unread. `list(n)` lists at most `n` in-scope files with their
/// sizes; one more than the budget is asked for, to know whether any was left out.
fn within_budget(
    list: impl FnOnce(usize) -> Vec<(String, u64)>,
    budget: ScanBudget,
) -> (Vec<String>, bool) {
    let files = list(budget.files + 1);
    let mut truncated = files.len() > budget.files;
    let mut bytes = 0u64;
    let mut out = Vec::new();
    for (rel, size) in files.into_iter().take(budget.files) {
        bytes = bytes.saturating_add(size);
        if bytes > budget.bytes {
            truncated = true;
            break;
        }
        out.push(rel);
    }
    (out, truncated)
}

/// What close.json says the scan covered: how many files it read, and its limits when
/// they left files unread.
fn scan_note(read: usize, truncated: bool, budget: ScanBudget) -> String {
    if truncated {
        format!(
            "{read} in-scope files scanned, the first {} files or {} MiB",
            budget.files,
            budget.bytes >> 20
        )
    } else {
        format!("{read} in-scope files scanned")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists `n` files of `size` bytes the way `in_scope_files` does: at most `limit`.
    fn listing(n: usize, size: u64) -> impl FnOnce(usize) -> Vec<(String, u64)> {
        move |limit| (0..n.min(limit)).map(|i| (format!("f{i}"), size)).collect()
    }

    const BUDGET: ScanBudget = ScanBudget {
        files: 3,
        bytes: 30,
    };

    fn conflict(predicate: &str, values: &[i64]) -> AttestedConflict {
        AttestedConflict {
            predicate: predicate.into(),
            values: values.iter().map(|v| Value::from(*v)).collect(),
            lines: Vec::new(),
            claimed: Vec::new(),
            note: String::new(),
        }
    }

    /// Only a conflict on the value's own predicate holds it back: with a skill of two
    /// output predicates, the other predicate's conflict must not be taken for this one's.
    #[test]
    fn the_uncited_conflict_is_the_one_on_the_values_predicate() {
        let repo = [conflict("unit", &[1, 2]), conflict("format", &[3, 4])];
        let found = uncited_conflict(&repo, "format", &Value::from(3));
        assert_eq!(found.map(|c| c.predicate.as_str()), Some("format"));
        assert!(uncited_conflict(&repo, "range", &Value::from(3)).is_none());
    }

    #[test]
    fn a_repository_exactly_at_the_file_limit_is_read_whole() {
        let (read, truncated) = within_budget(listing(3, 1), BUDGET);
        assert_eq!(read, ["f0", "f1", "f2"]);
        assert!(!truncated, "nothing was left out");
    }

    #[test]
    fn one_file_past_the_file_limit_is_left_out_and_said_so() {
        let (read, truncated) = within_budget(listing(4, 1), BUDGET);
        assert_eq!(read, ["f0", "f1", "f2"]);
        assert!(truncated, "f3 was not read");
    }

    #[test]
    fn files_exactly_at_the_byte_limit_are_read_whole() {
        let (read, truncated) = within_budget(listing(3, 10), BUDGET);
        assert_eq!(read.len(), 3);
        assert!(!truncated, "30 bytes fit a 30-byte budget");
    }

    #[test]
    fn the_file_that_passes_the_byte_limit_is_not_read_and_said_so() {
        let (read, truncated) = within_budget(listing(3, 11), BUDGET);
        assert_eq!(read, ["f0", "f1"]);
        assert!(truncated, "f2 would pass 30 bytes");
    }

    #[test]
    fn the_note_names_the_limits_only_when_they_left_files_unread() {
        let whole = scan_note(2, false, BUDGET);
        assert!(whole.starts_with("2 in-scope files"), "{whole}");
        assert!(!whole.contains("first"), "{whole}");
        let cut = scan_note(3, true, SCAN);
        assert!(
            cut.starts_with("3 in-scope files") && cut.contains("5000") && cut.contains("64 MiB"),
            "{cut}"
        );
    }
}
