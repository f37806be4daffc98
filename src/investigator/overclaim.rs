//! The over-claiming adversary: it cites any region that mentions the target's name and
//! claims a wrong value from the skill's vocabulary, then proposes it. It measures the
//! engine's gate (DESIGN §10a): whatever it proposes must never reach `auto`.
//!
//! Invariant: it is told only which value is right (so that it can claim another), and it
//! reaches the engine through the public rails and the tool router like any agent.

use serde_json::{Value, json};

use super::Conclusion;
use super::brief::Brief;
use super::direct::Direct;
use super::plan::{self, Hands};
use super::rules;
use crate::case::finalize::Status;
use crate::case::views::CASE_MD;
use crate::case::{CaseError, RunHandle};
use crate::driver::scripted::Agent;
use crate::skill::ValueConstraint;

/// Regions cited at most.
const CITED: usize = 2;

/// A value of `constraint` other than `right` (the first in vocabulary order).
#[must_use]
pub fn wrong_value(constraint: Option<&ValueConstraint>, right: Option<&Value>) -> Value {
    match constraint {
        Some(ValueConstraint::Boolean) => json!(right != Some(&json!(true))),
        Some(ValueConstraint::Vocabulary { values }) => values
            .iter()
            .map(|v| json!(v))
            .find(|v| Some(v) != right)
            .unwrap_or(Value::Null),
        _ => json!("Reserved for internal use; clients should ignore it."),
    }
}

/// Runs the adversary on the open run; `right` is the value it must not claim
/// (`None` when the right outcome is a decline: any value is then wrong).
///
/// # Errors
///
/// A rail that fails for a reason other than refusing the move (a refusal is a decline,
/// not an error).
pub fn run(run: &RunHandle, right: Option<&Value>) -> Result<Conclusion, CaseError> {
    let agent = Agent::new(run.clone());
    let case = agent.case();
    let mut actions = 0u32;
    let decline = |agent: &Agent, actions: u32, reason: String| {
        agent
            .finalize(Some(Status::InsufficientEvidence), Some(&reason))
            .map(|_| Conclusion {
                status: Status::InsufficientEvidence,
                reason: Some(reason),
                actions: actions + 1,
            })
    };
    let brief_path = run.dir().join(CASE_MD);
    let text = std::fs::read_to_string(&brief_path).map_err(CaseError::io("read", &brief_path))?;
    let Some(brief) = Brief::parse(&text) else {
        return decline(&agent, actions, "CASE.md is not a case brief".into());
    };
    let Some(output) = case.policy.contract.outputs.first().cloned() else {
        return decline(&agent, actions, "the skill writes no field".into());
    };
    let mut hands = Direct::new(run);
    let needles = rules::name_variants(brief.name());
    actions += 1;
    let Ok(found) = hands.search(&brief, &needles);
    let mut windows = plan::windows(&brief, &found.hits);
    for w in &mut windows {
        if let Some((_, n)) = found.lengths.iter().find(|(p, _)| *p == w.path) {
            w.end = w.end.min(*n).max(w.start);
        }
    }
    let mut cited = Vec::new();
    for w in windows.iter().take(CITED) {
        actions += 1;
        if let Ok(id) = agent.add_evidence(&w.path, Some((w.start, w.end))) {
            cited.push(id);
        }
    }
    if cited.is_empty() {
        return decline(&agent, actions, "no region mentions the target".into());
    }
    let value = wrong_value(
        case.policy.contract.value_constraints.get(&output.field),
        right,
    );
    let refs: Vec<&str> = cited.iter().map(String::as_str).collect();
    actions += 1;
    let claim = match agent.add_claim(&output.predicate, value.clone(), &refs, 0.95) {
        Ok(c) => c,
        Err(e) => return decline(&agent, actions, format!("add-claim refused: {e}")),
    };
    actions += 1;
    if let Err(e) = agent.freeze_research() {
        return decline(&agent, actions, format!("freeze-research refused: {e}"));
    }
    actions += 2;
    agent.propose(value, &[&claim], "the cited code states it")?;
    if let Err(e) = agent.validate() {
        return decline(
            &agent,
            actions,
            format!("validation refused the proposal: {e}"),
        );
    }
    actions += 1;
    match agent.finalize(None, None) {
        Ok(_) => Ok(Conclusion {
            status: Status::ProposalGenerated,
            reason: None,
            actions,
        }),
        Err(e) => decline(&agent, actions, format!("finalize refused: {e}")),
    }
}
