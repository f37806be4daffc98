//! The positive control: an investigator that is told the label and proposes exactly it
//! through the public rails, grounded on the label's own evidence regions.
//!
//! Invariant: it has no privileged path — every step is a rail an agent could call — so a
//! scenario it cannot pass names a label the engine cannot reach (R-BAT-8): a corpus or
//! engine defect, never a scoring matter. For `conflicted` the label carries no values, so
//! it claims two different admissible values on two labelled regions: the control proves
//! the engine can record the conflict, not which side is true.

use serde_json::{Value, json};

use super::corpus::{Expect, LabelDoc, ValueRule};
use crate::case::CaseError;
use crate::case::finalize::Status;
use crate::driver::scripted::Agent;
use crate::skill::{OutputSpec, SkillPolicy, ValueConstraint};

/// What the oracle did.
#[derive(Debug, Clone, PartialEq)]
pub struct OracleRun {
    pub actions: u32,
    pub reason: Option<String>,
}

/// A description that meets every `mustMention` group with its first alternative and
/// mentions nothing forbidden.
fn description(must: &[Vec<String>]) -> String {
    let words: Vec<&str> = must
        .iter()
        .filter_map(|g| g.first().map(String::as_str))
        .collect();
    match words.as_slice() {
        [] => "Documented by the cited sources.".into(),
        [one] => format!("Refers to the {one} stated by the cited sources."),
        many => {
            let (last, rest) = many.split_last().unwrap_or((&"", &[]));
            format!(
                "Refers to the {} and {last} stated by the cited sources.",
                rest.join(", ")
            )
        }
    }
}

/// The value the label wants for one field.
fn wanted(rule: ValueRule<'_>) -> Value {
    match rule {
        ValueRule::Equals(v) => v.clone(),
        ValueRule::Mentions { must, .. } => json!(description(must)),
    }
}

/// Two different admissible values for a field (for recording a conflict).
fn two_values(constraint: Option<&ValueConstraint>) -> (Value, Value) {
    match constraint {
        Some(ValueConstraint::Boolean) => (json!(true), json!(false)),
        Some(ValueConstraint::Vocabulary { values }) if values.len() >= 2 => {
            (json!(values[0]), json!(values[1]))
        }
        _ => (
            json!("Refers to the value stated by the first cited source."),
            json!("Refers to a different value stated by the second cited source."),
        ),
    }
}

/// Plays the label through the rails on the open run; always tries to end finalized (a
/// rail's refusal is recorded as the reason of an honest decline).
///
/// # Errors
///
/// The errors of the final decline when even it is refused. A refusal while playing the label is not
/// returned: it becomes the reason of the decline.
pub fn run(run: &crate::case::RunHandle, label: &LabelDoc) -> Result<OracleRun, CaseError> {
    let agent = Agent::new(run.clone());
    match play(&agent, agent.case(), label) {
        Ok(done) => Ok(done),
        Err(e) => decline_after(&agent, 1, format!("a rail refused: {e}")),
    }
}

/// Adds the label's evidence regions, then ends the run the way the label's status asks.
fn play(
    agent: &Agent,
    case: &crate::case::CaseDoc,
    label: &LabelDoc,
) -> Result<OracleRun, CaseError> {
    let mut actions = 0u32;
    let expect = &label.expect;
    let mut artifacts = Vec::new();
    for region in &expect.evidence {
        actions += 1;
        match agent.add_evidence(&region.path, Some((region.lines[0], region.lines[1]))) {
            Ok(id) => artifacts.push(id),
            Err(e) => {
                return decline_after(
                    agent,
                    actions + 1,
                    format!("add-evidence {}: {e}", region.path),
                );
            }
        }
    }
    let refs: Vec<&str> = artifacts.iter().map(String::as_str).collect();
    let contract = &case.policy.contract;
    // Every status but a decline plays the skill's output.
    let with_output =
        |play: &dyn Fn(&OutputSpec) -> Result<OracleRun, CaseError>| match contract.outputs.first()
        {
            Some(output) => play(output),
            None => decline_after(agent, actions + 1, "the skill has no output".into()),
        };
    match expect.status {
        Status::ProposalGenerated => {
            with_output(&|output| propose_label(agent, expect, output, &refs, actions))
        }
        Status::Supported => {
            with_output(&|output| support_current(agent, case, output, &refs, actions))
        }
        Status::Conflicted => {
            with_output(&|output| record_conflict(agent, contract, output, &refs, actions))
        }
        status @ (Status::InsufficientEvidence | Status::BlockedByMissingSource) => {
            agent.finalize(Some(status), Some("the label declines"))?;
            Ok(OracleRun::finished(actions + 1))
        }
    }
}

/// `proposal_generated`: claims, proposes and finalizes the value the label wants for the
/// skill's output, citing every region; declines when the label gives no value or
/// validation fails.
fn propose_label(
    agent: &Agent,
    expect: &Expect,
    output: &OutputSpec,
    refs: &[&str],
    mut actions: u32,
) -> Result<OracleRun, CaseError> {
    let Some(rule) = expect.values.get(&output.field).and_then(|e| e.rule().ok()) else {
        return decline_after(
            agent,
            actions + 1,
            format!("the label gives no value for `{}`", output.field),
        );
    };
    let value = wanted(rule);
    actions += 1;
    let claim = agent.add_claim(&output.predicate, value.clone(), refs, 1.0)?;
    actions += 1;
    agent.freeze_research()?;
    actions += 2;
    agent.propose(value, &[&claim], "the cited regions state this value")?;
    let validation = agent.validate();
    if let Err(e) = &validation {
        return decline_after(agent, actions + 1, format!("validate: {e}"));
    }
    actions += 1;
    agent.finalize(None, None)?;
    Ok(OracleRun::finished(actions))
}

/// `supported`: claims the output's current value on every region and finalizes as
/// supported; declines when the output has no current value.
fn support_current(
    agent: &Agent,
    case: &crate::case::CaseDoc,
    output: &OutputSpec,
    refs: &[&str],
    mut actions: u32,
) -> Result<OracleRun, CaseError> {
    let current = case
        .target
        .current
        .get(&output.field)
        .cloned()
        .unwrap_or(Value::Null);
    if current.is_null() {
        return decline_after(
            agent,
            actions + 1,
            format!("`{}` has no current value to support", output.field),
        );
    }
    actions += 3;
    agent.add_claim(&output.predicate, current, refs, 1.0)?;
    agent.freeze_research()?;
    agent.finalize(
        Some(Status::Supported),
        Some("the cited regions state the current value"),
    )?;
    Ok(OracleRun::finished(actions))
}

/// `conflicted`: claims two different admissible values, one on the first region and one
/// on the rest, and finalizes as conflicted; declines with fewer than two regions.
fn record_conflict(
    agent: &Agent,
    contract: &SkillPolicy,
    output: &OutputSpec,
    refs: &[&str],
    mut actions: u32,
) -> Result<OracleRun, CaseError> {
    if refs.len() < 2 {
        return decline_after(
            agent,
            actions + 1,
            "a conflict needs two labelled regions".into(),
        );
    }
    let (a, b) = two_values(contract.value_constraints.get(&output.field));
    actions += 4;
    agent.add_claim(&output.predicate, a, &refs[..1], 1.0)?;
    agent.add_claim(&output.predicate, b, &refs[1..], 1.0)?;
    agent.freeze_research()?;
    agent.finalize(
        Some(Status::Conflicted),
        Some("the labelled sources disagree"),
    )?;
    Ok(OracleRun::finished(actions))
}

impl OracleRun {
    /// A run that ended as the label asked, after `actions` rail calls.
    fn finished(actions: u32) -> OracleRun {
        OracleRun {
            actions,
            reason: None,
        }
    }
}

/// Ends the run with an honest decline after a refusal, keeping the refusal as the reason.
fn decline_after(agent: &Agent, actions: u32, reason: String) -> Result<OracleRun, CaseError> {
    let _ = agent.finalize(Some(Status::InsufficientEvidence), Some(&reason));
    Ok(OracleRun {
        actions,
        reason: Some(reason),
    })
}
