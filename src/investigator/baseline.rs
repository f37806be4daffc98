//! The baseline arm: what the AIR alone supports, with no repository access at all.
//!
//! From the case document only (the target, its name and type, its current values, the
//! operation's own description) it proposes
//!
//! * a unit, when the name ends in a word that spells one (`_ms`, `Millis`, `_seconds`,
//!   `_bytes`, `_kib`, `_cents` …) on a numeric field that is not a rate (`_per_`);
//! * a sensitivity class, when a name word is a secret, financial or personal word
//!   (secret before financial before pii; a pagination `token` is not a secret);
//! * a description, when the operation's own description has a sentence naming the field;
//!
//! and never a retryability or an operation description: nothing in the AIR states them.
//! Its evidence is the AIR text it read, added as external evidence (source `air`, always
//! unverified), so the engine's bars decide: a refusal anywhere finalizes
//! `insufficient_evidence` with the refusal as the reason.
//!
//! Invariant: it never calls the tool router and never cites a repository file, and its
//! outcome is a function of case.json alone (deterministic).

use serde_json::{Value, json};

use super::Conclusion;
use super::direct::Direct;
use super::plan::{self, Hands};
use super::rules;
use crate::air::{DeficiencyCode, name_words};
use crate::case::finalize::Status;
use crate::case::{CaseDoc, CaseError, RunHandle};

/// Last name words that spell a unit, with the vocabulary's spelling.
const UNIT_SUFFIXES: &[(&str, &str)] = &[
    ("ns", "ns"),
    ("nanos", "ns"),
    ("nanoseconds", "ns"),
    ("usec", "us"),
    ("micros", "us"),
    ("microseconds", "us"),
    ("ms", "ms"),
    ("msec", "ms"),
    ("msecs", "ms"),
    ("millis", "ms"),
    ("milliseconds", "ms"),
    ("sec", "s"),
    ("secs", "s"),
    ("seconds", "s"),
    ("mins", "min"),
    ("minutes", "min"),
    ("hrs", "h"),
    ("hours", "h"),
    ("days", "d"),
    ("bytes", "B"),
    ("kb", "kB"),
    ("kib", "KiB"),
    ("mb", "MB"),
    ("mib", "MiB"),
    ("gb", "GB"),
    ("gib", "GiB"),
    ("cents", "minor_unit"),
    ("pct", "percent"),
    ("percent", "percent"),
];

/// Name words by sensitivity class, checked in this order. Each is also a word the
/// deficiency detector treats as sensitive.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "credential",
    "credentials",
    "otp",
];
const FINANCIAL_WORDS: &[&str] = &["card", "cvv", "cvc", "pan", "iban", "bic"];
const PII_WORDS: &[&str] = &[
    "email",
    "phone",
    "address",
    "ssn",
    "dob",
    "birth",
    "birthday",
    "passport",
    "firstname",
    "lastname",
    "surname",
    "fullname",
    "nationality",
    "gender",
];
/// Words that make a `token` a position in a listing, not a secret.
const PAGING_WORDS: &[&str] = &[
    "page",
    "next",
    "continuation",
    "cursor",
    "pagination",
    "sync",
];

/// What the AIR says about the target and the value it supports.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    value: Value,
    /// The AIR text the value rests on.
    excerpt: String,
    rationale: String,
}

/// Investigates the open run from its case document alone, and finalizes it.
///
/// # Errors
///
/// A rail that fails for a reason other than refusing the move (a refusal is a decline,
/// not an error).
pub fn run(run: &RunHandle) -> Result<Conclusion, CaseError> {
    let mut hands = Direct::new(run);
    let case = run.doc().clone();
    let insufficient = Status::InsufficientEvidence;
    let Some(out) = case.policy.contract.outputs.first().cloned() else {
        return hands.decline(insufficient, "the skill writes no field");
    };
    let reading = match read_air(&case, &out.field) {
        Ok(r) => r,
        Err(why) => {
            let reason = format!("the AIR alone does not support a {}: {why}", out.field);
            return hands.decline(insufficient, &reason);
        }
    };
    if let Some(constraint) = case.policy.contract.value_constraints.get(&out.field)
        && !constraint.admits(&reading.value)
    {
        let reason = format!(
            "the name suggests {} = {}, which the skill does not admit",
            out.field, reading.value
        );
        return hands.decline(insufficient, &reason);
    }

    let claim = match ground(&mut hands, &case, &out.predicate, &reading) {
        Ok(claim) => claim,
        Err(reason) => return hands.decline(insufficient, &reason),
    };
    let proves_current = case.task.deficiency == DeficiencyCode::UnprovenInferredValue
        && case.target.current.get(&out.field) == Some(&reading.value);
    if proves_current {
        let reason = format!(
            "the AIR itself states the current {} {}: {}",
            out.field, reading.value, reading.rationale
        );
        return finish(hands, Status::Supported, &reason);
    }

    if let Err(reason) = propose(&mut hands, &case, &out.field, &reading, &claim) {
        return hands.decline(insufficient, &reason);
    }
    hands.conclude(plan::Outcome {
        status: Some(Status::ProposalGenerated),
        reason: None,
        message: reading.rationale,
    })
}

/// Cites the AIR text, claims its value and freezes the research: the accepted claim's id,
/// or why the baseline must decline.
fn ground(
    hands: &mut Direct,
    case: &CaseDoc,
    predicate: &str,
    reading: &Reading,
) -> Result<String, String> {
    let uri = format!("air:{}", case.target.key);
    let artifact = hands
        .rail(|run| {
            run.add_external_evidence("air", &uri, &reading.excerpt, None)
                .map(|a| a.id)
        })
        .map_err(|why| format!("the AIR text cannot be cited: {why}"))?;
    let Ok(claimed) = hands.add_claim(predicate, &reading.value, &[artifact], 1);
    let claim = claimed.map_err(|why| format!("add-claim failed: {why}"))?;
    let Ok(frozen) = hands.freeze();
    let frozen = frozen.map_err(|why| format!("stage 1 did not accept the claim: {why}"))?;
    if frozen.rejection(&claim).is_some() || frozen.conflicts > 0 {
        let why = frozen
            .rejection(&claim)
            .unwrap_or("a conflict was recorded");
        return Err(format!("stage 1 did not accept the claim: {why}"));
    }
    Ok(claim)
}

/// Writes, validates and finalizes the proposal of `reading`, or says why it could not.
fn propose(
    hands: &mut Direct,
    case: &CaseDoc,
    field: &str,
    reading: &Reading,
    claim: &str,
) -> Result<(), String> {
    let proposal = proposal(case, field, reading, claim);
    let text = format!("{}\n", pretty(&proposal));
    let Ok(written) = hands.write_proposal(&text);
    written.map_err(|why| format!("could not write the proposal: {why}"))?;
    let Ok(validated) = hands.validate();
    validated.map_err(|why| format!("validation rejected the proposal: {why}"))?;
    let Ok(finalized) = hands.finalize(None);
    finalized.map_err(|why| format!("finalize refused the proposal: {why}"))?;
    Ok(())
}

/// Finalizes `supported` (or, refused, `insufficient_evidence` saying why).
fn finish(hands: Direct, status: Status, reason: &str) -> Result<Conclusion, CaseError> {
    let mut hands = hands;
    let Ok(outcome) = plan::finish(&mut hands, status, reason);
    hands.conclude(outcome)
}

/// output/proposal.json as a hand-writing agent writes it (the scripted driver's shape).
fn proposal(case: &CaseDoc, field: &str, reading: &Reading, claim: &str) -> Value {
    let target = case.target.key.to_string();
    json!({
        "format": "anvil-proposal", "formatVersion": 1,
        "skill": case.identity.skill, "skillVersion": case.identity.skill_version,
        "deficiency": case.task.deficiency, "target": target,
        "patch": {"target": target, "set": {field: reading.value}},
        "grounding": {field: [claim]}, "confidence": 0.9, "rationale": reading.rationale,
    })
}

/// The value the AIR alone supports for `field` of the target, or why there is none.
fn read_air(case: &CaseDoc, field: &str) -> Result<Reading, String> {
    let t = &case.target;
    let name = t.name();
    let words = name_words(name);
    match field {
        "unit" => {
            let f = t.field.as_ref().ok_or("the target is not a field")?;
            if !matches!(f.ty.as_str(), "integer" | "number") {
                return Err(format!("`{name}` is a {}, not a number", f.ty));
            }
            if words.iter().any(|w| w == "per") {
                return Err(format!("`{name}` is a rate, which no name word settles"));
            }
            let last = words.last().map_or("", String::as_str);
            let (_, unit) = UNIT_SUFFIXES
                .iter()
                .find(|(word, _)| *word == last)
                .ok_or_else(|| format!("no word of the name `{name}` spells a unit"))?;
            Ok(Reading {
                value: json!(unit),
                excerpt: pretty(f),
                rationale: format!(
                    "The field's name `{name}` ends in `{last}`, which spells {unit}."
                ),
            })
        }
        "sensitivity" => {
            let f = t.field.as_ref().ok_or("the target is not a field")?;
            let joined = words.concat();
            let has = |list: &[&str]| {
                words
                    .iter()
                    .find(|w| list.contains(&w.as_str()))
                    .cloned()
                    .or_else(|| list.contains(&joined.as_str()).then(|| joined.clone()))
            };
            let paging = words.iter().any(|w| PAGING_WORDS.contains(&w.as_str()));
            let class = match (has(SECRET_WORDS), has(FINANCIAL_WORDS), has(PII_WORDS)) {
                (Some(w), _, _) if !(w == "token" && paging) => ("secret", w),
                (_, Some(w), _) => ("financial", w),
                (_, _, Some(w)) => ("pii", w),
                _ => return Err(format!("no word of the name `{name}` names sensitive data")),
            };
            Ok(Reading {
                value: json!(class.0),
                excerpt: pretty(f),
                rationale: format!(
                    "The field's name `{name}` contains `{}`, which names {} data.",
                    class.1, class.0
                ),
            })
        }
        "description" => {
            let f = t
                .field
                .as_ref()
                .ok_or("nothing in the AIR describes an operation but its own description")?;
            let op = t.operation.as_ref().ok_or("the field has no operation")?;
            let text = op.description.as_deref().unwrap_or("");
            let needles = rules::name_variants(name);
            let sentence = text
                .split_inclusive(['.', '!', '?'])
                .filter(|s| needles.iter().any(|n| names(s, n)))
                .find_map(rules::sentence)
                .ok_or_else(|| format!("the operation's description does not mention `{name}`"))?;
            Ok(Reading {
                value: json!(sentence),
                excerpt: format!("{}\n{}", pretty(op), pretty(f)),
                rationale: format!("The operation's own description says: {sentence}"),
            })
        }
        "retryable" => Err("the AIR never states whether an error may be retried".into()),
        other => Err(format!("no rule reads `{other}` from the AIR")),
    }
}

/// Whether `text` names `name` as a whole identifier.
fn names(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        let before = text[..i].chars().next_back().is_none_or(|c| !ident(c));
        let after = text[i + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !ident(c));
        before && after
    })
}

/// Pretty JSON of an AIR fragment: the excerpt the baseline cites.
fn pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::vocab::{SENSITIVITY, UNITS};

    #[test]
    fn every_unit_a_suffix_spells_is_in_the_vocabulary() {
        for (word, unit) in UNIT_SUFFIXES {
            assert!(UNITS.contains(unit), "{word} → {unit}");
        }
        assert!(
            ["secret", "financial", "pii"]
                .iter()
                .all(|c| SENSITIVITY.contains(c))
        );
    }

    #[test]
    fn every_sensitive_word_is_one_the_detector_flags() {
        let words: Vec<&str> = [SECRET_WORDS, FINANCIAL_WORDS, PII_WORDS].concat();
        let fields: Vec<Value> = words
            .iter()
            .map(|w| {
                json!({"location": "input.body", "name": w, "type": "string",
                "required": false, "description": "Kept as given.", "unit": null,
                "sensitivity": null})
            })
            .collect();
        let air: crate::air::Air = serde_json::from_value(json!({"airVersion": 1,
            "service": {"id": "s", "version": "1"},
            "operations": [{"id": "op", "method": "POST", "path": "/x", "description": "X.",
                "fields": fields, "errors": []}], "capabilities": []}))
        .unwrap();
        let flagged: Vec<String> = crate::air::detect(&air)
            .into_iter()
            .filter(|d| d.code == DeficiencyCode::UnclassifiedSensitiveField)
            .map(|d| d.target.to_string())
            .collect();
        for w in words {
            assert!(
                flagged.contains(&format!("op.op.input.body.{w}")),
                "{w} is not flagged: {flagged:?}"
            );
        }
    }

    #[test]
    fn names_match_whole_identifiers_only() {
        assert!(names("Send `gift_note` along.", "gift_note"));
        assert!(!names("Send gift_notes along.", "gift_note"));
        assert!(!names("a big_gift_note", "gift_note"));
    }
}
