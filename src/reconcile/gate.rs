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
use crate::case::rails::Frozen;

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
    let mut claimed: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for c in &accepted {
        let list = claimed.entry(c.predicate.clone()).or_default();
        if !list.contains(&c.value) {
            list.push(c.value.clone());
        }
    }
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
        let a = attester
            .attest(&predicate, value, &claims, &frozen.evidence)
            .unwrap_or_else(|| ClaimAttestation {
                status: AttestStatus::Unattested,
                strength: 0.0,
                verified_strength: 0.0,
                lines: vec![],
                note: format!("the skill has no attestation rules for `{predicate}`"),
            });
        let strength = attester.gate_strength(&predicate, &a);
        let required = contract.minimum_strength;
        let conflict = conflicts.iter().find(|c| c.predicate == predicate).cloned();
        // The repository as committed, beyond what was cited: a line stating another value.
        let uncited = repo_conflicts
            .iter()
            .find(|c| c.predicate == predicate && c.values.iter().any(|v| v != value))
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

/// Most in-scope files the whole-repository scan reads at close, and most bytes in all.
const SCAN_FILES: usize = 5_000;
const SCAN_BYTES: u64 = 64 << 20;

/// Every in-scope text file of the repository as the case may cite it (committed at its
/// revision, or as recorded at open), each as one whole-file verified excerpt, within
/// [`SCAN_FILES`] and [`SCAN_BYTES`]; with a description of what was scanned for close.json.
fn repository_excerpts(frozen: &Frozen) -> (crate::case::evidence::EvidenceDoc, String) {
    use crate::case::evidence::{EvidenceDoc, EvidenceRequest, acquire};
    let mut doc = EvidenceDoc::empty();
    let run = &frozen.run;
    let Ok(source) = crate::case::rails::evidence_source(run) else {
        return (doc, "the repository could not be read".into());
    };
    let repo = std::path::Path::new(&run.doc.inputs.repository);
    let policy = &run.doc.policy;
    let files = crate::case::evidence::in_scope_files(repo, &policy.inspect_scopes, SCAN_FILES + 1);
    let truncated = files.len() > SCAN_FILES;
    let mut bytes = 0u64;
    let mut read = 0usize;
    for (rel, size) in files.into_iter().take(SCAN_FILES) {
        bytes = bytes.saturating_add(size);
        if bytes > SCAN_BYTES {
            break;
        }
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
    let note = if truncated || bytes > SCAN_BYTES {
        format!(
            "{read} in-scope files scanned, the first {SCAN_FILES} files or {} MiB",
            SCAN_BYTES >> 20
        )
    } else {
        format!("{read} in-scope files scanned")
    };
    (doc, note)
}
