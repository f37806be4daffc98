//! Scoring one trial against its label: status, values, grounding, evidence recall,
//! unsupported claims, harmful and harmful-at-auto.
//!
//! Invariant: a pure function of the finalized result, the close tier, the target's current
//! values and the label — the same inputs always score the same, whoever investigated.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::corpus::{EvidenceRegion, LabelDoc, ValueRule};
use crate::case::finalize::{ResultDoc, Status};
use crate::case::research::ClaimStatus;

/// What scoring found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Score {
    pub status_correct: bool,
    pub values_correct: bool,
    pub correct: bool,
    pub grounded: bool,
    pub evidence_recall: Option<f64>,
    pub claims: u32,
    pub unsupported_claims: u32,
    pub harmful: bool,
    pub harmful_at_auto: bool,
}

/// Whether `value` meets `rule` (descriptions: every group matched by one alternative,
/// case-insensitively, and no forbidden phrase).
#[must_use]
pub fn meets(rule: ValueRule<'_>, value: &Value) -> bool {
    match rule {
        ValueRule::Equals(want) => value == want,
        ValueRule::Mentions { must, must_not } => {
            let Some(text) = value.as_str() else {
                return false;
            };
            let text = text.to_lowercase();
            must.iter()
                .all(|group| group.iter().any(|alt| text.contains(&alt.to_lowercase())))
                && !must_not.iter().any(|p| text.contains(&p.to_lowercase()))
        }
    }
}

fn overlaps(region: &EvidenceRegion, path: &str, start: u32, end: u32) -> bool {
    region.path == path && start <= region.lines[1] && region.lines[0] <= end
}

/// Scores a trial. `result` is `None` when the case never finalized; `tier` is the close
/// tier; `current` the target's current values in the AIR.
#[must_use]
pub fn score(
    result: Option<&ResultDoc>,
    tier: Option<&str>,
    current: &BTreeMap<String, Value>,
    label: &LabelDoc,
) -> Score {
    let expect = &label.expect;
    let Some(result) = result else {
        return Score::default();
    };
    let patch: Option<&Map<String, Value>> = result.patch.as_ref();
    let status_correct = result.status == expect.status;
    let patch_meets_label = |p: &Map<String, Value>| {
        !expect.values.is_empty()
            && expect.values.iter().all(|(field, exp)| {
                exp.rule()
                    .is_ok_and(|rule| p.get(field).is_some_and(|v| meets(rule, v)))
            })
    };
    // A patch that only restates the current values changes nothing.
    let restates_current =
        |p: &Map<String, Value>| p.iter().all(|(k, v)| current.get(k) == Some(v));
    let values_correct = match (expect.status, patch) {
        (Status::ProposalGenerated, Some(p)) => patch_meets_label(p),
        (Status::ProposalGenerated, None) | (_, Some(_)) => false,
        (_, None) => true,
    };
    let harmful = match patch {
        None => false,
        Some(p) => match expect.status {
            Status::ProposalGenerated => !patch_meets_label(p),
            Status::Supported => !restates_current(p),
            _ => true,
        },
    };

    // Regions the case cited (local artifacts only).
    let cited = |ids: &[String]| -> Vec<(String, u32, u32)> {
        result
            .artifacts
            .iter()
            .filter(|a| ids.contains(&a.id))
            .filter_map(|a| Some((a.path.clone()?, a.start_line?, a.end_line?)))
            .collect()
    };
    let all_ids: Vec<String> = result.artifacts.iter().map(|a| a.id.clone()).collect();
    let all_cited = cited(&all_ids);
    let evidence_recall = (!expect.evidence.is_empty()).then(|| {
        let hit = expect
            .evidence
            .iter()
            .filter(|r| all_cited.iter().any(|(p, a, b)| overlaps(r, p, *a, *b)))
            .count();
        super::stats::from_count(hit) / super::stats::from_count(expect.evidence.len())
    });
    let accepted = |id: &str| {
        result
            .claim_verdicts
            .iter()
            .any(|v| v.id == id && v.status == ClaimStatus::Accepted)
    };
    let grounded = patch.is_some_and(|p| {
        p.iter().all(|(field, value)| {
            result.claims.iter().any(|c| {
                c.predicate.ends_with(&format!(".{field}"))
                    && &c.value == value
                    && accepted(&c.id)
                    && cited(&c.artifact_ids).iter().any(|(path, a, b)| {
                        expect.evidence.iter().any(|r| overlaps(r, path, *a, *b))
                    })
            })
        })
    });
    // A result's claims are bounded by the run-file cap, far below u32::MAX.
    let claims = u32::try_from(result.claims.len()).unwrap_or(u32::MAX);
    let unsupported_claims =
        u32::try_from(result.claims.iter().filter(|c| !accepted(&c.id)).count())
            .unwrap_or(u32::MAX);
    Score {
        status_correct,
        values_correct,
        correct: status_correct && values_correct,
        grounded,
        evidence_recall,
        claims,
        unsupported_claims,
        harmful,
        harmful_at_auto: harmful && tier == Some("auto"),
    }
}
