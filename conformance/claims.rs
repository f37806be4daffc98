//! Claims and the predicate vocabulary: checked at the rail and again at freeze for a
//! hand-written claims.json; failing claims are kept and marked rejected; conflicts are
//! recorded (R-CL-1..6).

use std::path::Path;

use crate::support::rails;
use anvil_bench::case::proposal::DocErrorKind;
use anvil_bench::case::research::{ClaimStatus, ResearchRecord, claim_id};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{
    World, bytes_of, claim, claim_input, ev, failed, freeze, lifecycle_json, msg, out, rail_cli,
    read_json, rejected_doc, stderr, unit_proposal, unit_research, write_json, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "claims::every_output_and_supporting_predicate_of_the_skill_is_accepted",
            rules: &["R-CL-1"],
            run: whole_vocabulary_accepted,
        },
        Check {
            name: "claims::an_out_of_vocabulary_predicate_is_refused_at_the_rail",
            rules: &["R-CL-1", "R-CL-2"],
            run: out_of_vocabulary_at_rail,
        },
        Check {
            name: "claims::the_cli_refuses_an_out_of_vocabulary_predicate_naming_it",
            rules: &["R-CL-2", "R-PARSE-7"],
            run: out_of_vocabulary_cli,
        },
        Check {
            name: "claims::a_hand_written_claim_as_a_positional_array_is_refused_at_freeze",
            rules: &["R-DOC-6", "R-PARSE-7"],
            run: positional_claim_at_freeze,
        },
        Check {
            name: "claims::an_out_of_vocabulary_predicate_in_a_hand_written_claims_json_is_rejected_at_freeze",
            rules: &["R-CL-3", "R-CL-5"],
            run: out_of_vocabulary_at_freeze,
        },
        Check {
            name: "claims::a_proposal_grounded_on_an_out_of_vocabulary_claim_fails_validation",
            rules: &["R-CL-3"],
            run: out_of_vocabulary_at_validation,
        },
        Check {
            name: "claims::a_claim_citing_an_unknown_artifact_is_refused_at_the_rail",
            rules: &["R-CL-4"],
            run: unknown_artifact_at_rail,
        },
        Check {
            name: "claims::a_claim_citing_no_artifact_is_refused_at_the_rail",
            rules: &["R-CL-4"],
            run: no_artifact_at_rail,
        },
        Check {
            name: "claims::a_hand_written_claim_citing_an_unknown_artifact_is_rejected_at_freeze",
            rules: &["R-CL-4", "R-CL-5"],
            run: unknown_artifact_at_freeze,
        },
        Check {
            name: "claims::a_claim_body_without_a_confidence_is_stored_with_confidence_one",
            rules: &["R-PARSE-3"],
            run: default_confidence,
        },
        Check {
            name: "claims::a_claim_body_carrying_an_excerpt_is_refused_at_the_rail",
            rules: &["R-CL-4", "R-PARSE-1"],
            run: excerpt_at_rail,
        },
        Check {
            name: "claims::a_hand_written_claim_carrying_an_excerpt_is_refused_at_freeze",
            rules: &["R-CL-4", "R-PARSE-1"],
            run: excerpt_at_freeze,
        },
        Check {
            name: "claims::failing_claims_are_marked_rejected_with_a_reason_and_never_dropped",
            rules: &["R-CL-5"],
            run: rejected_not_dropped,
        },
        Check {
            name: "claims::two_accepted_claims_with_different_values_on_one_output_are_a_conflict",
            rules: &["R-CL-6"],
            run: conflict_recorded,
        },
        Check {
            name: "claims::agreeing_claims_supporting_predicates_and_rejected_claims_are_no_conflict",
            rules: &["R-CL-6"],
            run: no_false_conflict,
        },
    ]
}

fn claims_doc(claims: Vec<Value>) -> Value {
    json!({"format": "anvil-claims", "formatVersion": 1, "claims": claims})
}

/// A hand-written claim with the engine's id for its content.
fn hand_claim(predicate: &str, value: Value, ids: &[&str], confidence: f64) -> Value {
    let ids: Vec<String> = ids.iter().map(std::string::ToString::to_string).collect();
    json!({
        "id": claim_id(predicate, &value, &ids),
        "predicate": predicate, "value": value, "artifactIds": ids, "confidence": confidence
    })
}

fn verdict_of<'a>(
    record: &'a ResearchRecord,
    id: &str,
) -> Option<&'a anvil_bench::case::research::ClaimVerdict> {
    record.claims.iter().find(|c| c.id == id)
}

fn whole_vocabulary_accepted() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    for (p, v) in [
        ("field.unit", json!("s")),
        (
            "field.conversion",
            json!("timedelta(seconds=capture_timeout)"),
        ),
        ("field.constraint", json!("at most 600")),
    ] {
        claim(&run, p, v, &[&a])?;
    }
    let record = freeze(&run)?;
    ensure!(
        record.claims.len() == 3
            && record
                .claims
                .iter()
                .all(|c| c.status == ClaimStatus::Accepted),
        "in-vocabulary claims were not all accepted: {:?}",
        record.claims
    );
    Ok(())
}

fn out_of_vocabulary_at_rail() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    claim(&run, "field.unit", json!("s"), &[&a])?;
    let before = bytes_of(&out(&run, "claims.json"));
    for p in [
        "field.description",
        "field.sensitivity",
        "error.retryable",
        "field.units",
        "FIELD.UNIT",
        "field.unit.extra",
        "",
    ] {
        let d = rejected_doc(
            rails::add_claim(&run, claim_input(p, json!("s"), &[&a]), None),
            "predicate",
            DocErrorKind::Boundary,
        )
        .map_err(|e| failed(format!("predicate `{p}`: {}", msg(&e))))?;
        ensure!(
            d.reason.contains(&format!("`{p}`")),
            "the refusal does not name `{p}`: {}",
            d.reason
        );
    }
    ensure!(
        bytes_of(&out(&run, "claims.json")) == before,
        "refused claims changed claims.json"
    );
    Ok(())
}

fn out_of_vocabulary_cli() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let o = rail_cli(
        &w,
        "add-claim",
        &run,
        &[
            "--predicate",
            "field.description",
            "--value",
            "\"seconds\"",
            "--artifact",
            &a,
        ],
    );
    ensure!(o.status.code() == Some(1), "exit {:?}", o.status.code());
    let err = stderr(&o);
    ensure!(
        err.contains("predicate") && err.contains("field.description"),
        "stderr does not name the field and predicate: {err}"
    );
    ensure!(
        !out(&run, "claims.json").exists(),
        "claims.json was written"
    );
    Ok(())
}

/// serde reads a struct from a positional array of its fields too; claims.json's claims
/// are objects (the schema's `type: object`), so a claim written as
/// `["cl-…", "field.unit", "s", ["ev-…"], 1.0]` is refused by name, and nothing freezes.
fn positional_claim_at_freeze() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let mut doc = read_json(&out(&u.run, "claims.json"));
    let first = doc["claims"][0].clone();
    doc["claims"][0] = json!([
        first["id"],
        first["predicate"],
        first["value"],
        first["artifactIds"],
        first["confidence"]
    ]);
    write_json(&out(&u.run, "claims.json"), &doc);
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    let d = rejected_doc(
        rails::freeze_research(&u.run, None),
        "claims[0]",
        DocErrorKind::Shape,
    )?;
    ensure!(
        d.reason.contains("expected an object") && d.to_string().contains("claims.json"),
        "the refusal does not say an object is expected in claims.json: {d}"
    );
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc,
        "a refused freeze changed lifecycle.json"
    );
    Ok(())
}

fn out_of_vocabulary_at_freeze() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let mut doc = read_json(&out(&u.run, "claims.json"));
    let bad = hand_claim(
        "field.description",
        json!("seconds"),
        &[&u.implementation],
        0.9,
    );
    let bad_id = bad["id"].as_str().unwrap().to_string();
    doc["claims"].as_array_mut().unwrap().push(bad);
    write_json(&out(&u.run, "claims.json"), &doc);
    let written = bytes_of(&out(&u.run, "claims.json"));
    let record = freeze(&u.run)?;
    let v = verdict_of(&record, &bad_id).ok_or("the out-of-vocabulary claim was dropped")?;
    ensure!(
        v.status == ClaimStatus::Rejected,
        "an out-of-vocabulary predicate was accepted at freeze"
    );
    ensure!(
        v.reasons.iter().any(|r| r.contains("field.description")),
        "the reason does not name the predicate: {:?}",
        v.reasons
    );
    ensure!(
        verdict_of(&record, &u.claim).is_some_and(|v| v.status == ClaimStatus::Accepted),
        "the good claim was not accepted"
    );
    ensure!(
        bytes_of(&out(&u.run, "claims.json")) == written,
        "freeze rewrote claims.json"
    );
    let lc = lifecycle_json(&u.run);
    ensure!(
        lc["records"]["research"]["claims"]
            .as_array()
            .is_some_and(|c| c
                .iter()
                .any(|c| c["id"] == bad_id && c["status"] == "rejected")),
        "lifecycle.json does not record the rejection"
    );
    Ok(())
}

/// A claim with an out-of-vocabulary predicate that asserts the proposed value is
/// written straight into claims.json; the proposal grounded on it fails validation.
fn out_of_vocabulary_at_validation() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let t = ev(&run, "tests/test_capture.py", 6, 8)?;
    let bad = hand_claim("field.unit_guess", json!("s"), &[&a, &t], 0.9);
    let bad_id = bad["id"].as_str().unwrap().to_string();
    write_json(&out(&run, "claims.json"), &claims_doc(vec![bad]));
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&bad_id]));
    let record = rails::validate(&run, None, false).map_err(failed)?;
    ensure!(
        record.verdict == anvil_bench::case::validate::Verdict::Fail,
        "a proposal grounded on an out-of-vocabulary claim passed validation"
    );
    let c = record
        .checks
        .iter()
        .find(|c| c.id == "claims_from_admissible_sources")
        .ok_or("no claims_from_admissible_sources check")?;
    ensure!(
        !c.passed,
        "claims_from_admissible_sources passed a rejected claim"
    );
    Ok(())
}

fn unknown_artifact_at_rail() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let ghost = "ev-000000000000000000000000";
    let d = rejected_doc(
        rails::add_claim(
            &run,
            claim_input("field.unit", json!("s"), &[&a, ghost]),
            None,
        ),
        "artifactIds",
        DocErrorKind::Grounding,
    )?;
    ensure!(
        d.reason.contains(ghost),
        "the refusal does not name `{ghost}`"
    );
    ensure!(
        !out(&run, "claims.json").exists(),
        "claims.json was written"
    );
    Ok(())
}

fn no_artifact_at_rail() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    rejected_doc(
        rails::add_claim(&run, claim_input("field.unit", json!("s"), &[]), None),
        "artifactIds",
        DocErrorKind::Grounding,
    )?;
    ensure!(
        !out(&run, "claims.json").exists(),
        "claims.json was written"
    );
    Ok(())
}

fn unknown_artifact_at_freeze() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let ghost = "ev-000000000000000000000000";
    let mut doc = read_json(&out(&u.run, "claims.json"));
    let bad = hand_claim("field.unit", json!("s"), &[ghost], 0.9);
    let bad_id = bad["id"].as_str().unwrap().to_string();
    doc["claims"].as_array_mut().unwrap().push(bad);
    write_json(&out(&u.run, "claims.json"), &doc);
    let record = freeze(&u.run)?;
    let v = verdict_of(&record, &bad_id).ok_or("the claim was dropped")?;
    ensure!(
        v.status == ClaimStatus::Rejected && v.reasons.iter().any(|r| r.contains(ghost)),
        "a claim citing an unknown artifact was not rejected naming it: {v:?}"
    );
    Ok(())
}

fn excerpt_at_rail() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let body = json!({
        "predicate": "field.unit", "value": "s", "artifactIds": [a], "confidence": 0.9,
        "excerpt": "# capture_timeout is in seconds"
    });
    match rails::add_claim_json(&run, &body, None) {
        Err(anvil_bench::case::CaseError::Document(d))
            if d.kind == DocErrorKind::UnknownField
                && d.document == "add-claim"
                && d.field.contains("excerpt") => {}
        other => return Err(format!("a claim body with an excerpt: {other:?}").into()),
    }
    ensure!(
        !out(&run, "claims.json").exists(),
        "claims.json was written"
    );
    Ok(())
}

fn excerpt_at_freeze() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let mut doc = read_json(&out(&u.run, "claims.json"));
    doc["claims"][0]["excerpt"] = json!("capture_timeout is in seconds");
    write_json(&out(&u.run, "claims.json"), &doc);
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    match rails::freeze_research(&u.run, None) {
        Err(anvil_bench::case::CaseError::Document(d))
            if d.kind == DocErrorKind::UnknownField
                && d.document == "output/claims.json"
                && d.field.starts_with("claims[0].excerpt") => {}
        other => return Err(format!("a claim with an excerpt at freeze: {other:?}").into()),
    }
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc,
        "a refused freeze changed lifecycle.json"
    );
    Ok(())
}

fn rejected_not_dropped() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let a = u.implementation.as_str();
    let bad = [
        hand_claim("field.description", json!("seconds"), &[a], 0.9),
        hand_claim(
            "field.unit",
            json!("s"),
            &["ev-ffffffffffffffffffffffff"],
            0.9,
        ),
        hand_claim("field.unit", json!("s"), &[a], 1.5),
        hand_claim("field.unit", json!("fortnight"), &[a], 0.9),
        hand_claim("field.unit", json!("ms"), &[], 0.9),
    ];
    let mut doc = read_json(&out(&u.run, "claims.json"));
    for b in &bad {
        doc["claims"].as_array_mut().unwrap().push(b.clone());
    }
    write_json(&out(&u.run, "claims.json"), &doc);
    let written = bytes_of(&out(&u.run, "claims.json"));
    let record = freeze(&u.run)?;
    ensure!(
        record.claims.len() == 1 + bad.len(),
        "{} verdicts for {} claims",
        record.claims.len(),
        1 + bad.len()
    );
    for b in &bad {
        let id = b["id"].as_str().unwrap();
        let v = verdict_of(&record, id).ok_or_else(|| format!("claim {b} was dropped"))?;
        ensure!(
            v.status == ClaimStatus::Rejected && !v.reasons.is_empty(),
            "claim {b} is {:?} with reasons {:?}",
            v.status,
            v.reasons
        );
    }
    ensure!(
        bytes_of(&out(&u.run, "claims.json")) == written,
        "freeze rewrote claims.json"
    );
    // The result of a decline still carries every claim and its verdict.
    let result = crate::support::rails::finalize(
        &u.run,
        Some(anvil_bench::case::finalize::Status::InsufficientEvidence),
        Some("checking that nothing is dropped"),
        None,
    )
    .map_err(failed)?;
    ensure!(
        result.claims.len() == 1 + bad.len() && result.claim_verdicts.len() == 1 + bad.len(),
        "result.json dropped claims: {} claims, {} verdicts",
        result.claims.len(),
        result.claim_verdicts.len()
    );
    Ok(())
}

fn conflicting_run(w: &World) -> Result<(std::path::PathBuf, String, String), Failed> {
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let t = ev(&run, "tests/test_capture.py", 6, 8)?;
    let s = claim(&run, "field.unit", json!("s"), &[&a])?;
    let ms = claim(&run, "field.unit", json!("ms"), &[&t])?;
    Ok((run, s, ms))
}

fn conflict_recorded() -> Result<(), Failed> {
    let w = World::new();
    let (run, s, ms) = conflicting_run(&w)?;
    let record = freeze(&run)?;
    let c = record
        .conflict_on("field.unit")
        .ok_or("no conflict recorded on field.unit")?;
    let mut values: Vec<&Value> = c.values.iter().map(|v| &v.value).collect();
    values.sort_by_key(std::string::ToString::to_string);
    ensure!(
        values == [&json!("ms"), &json!("s")],
        "conflict values {values:?}"
    );
    let ids: Vec<&String> = c.values.iter().flat_map(|v| &v.claim_ids).collect();
    ensure!(
        ids.contains(&&s) && ids.contains(&&ms),
        "the conflict does not name both claims"
    );
    ensure!(
        lifecycle_json(&run)["records"]["research"]["conflicts"]
            .as_array()
            .is_some_and(|c| c.len() == 1),
        "lifecycle.json does not record the conflict"
    );
    Ok(())
}

fn no_false_conflict() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let run: &Path = &u.run;
    let d = ev(run, "docs/payments.md", 3, 4)?;
    // A second claim agreeing on `s`, and supporting claims with different values.
    claim(run, "field.unit", json!("s"), &[&d])?;
    claim(
        run,
        "field.conversion",
        json!("timedelta(seconds=...)"),
        &[&u.implementation],
    )?;
    claim(run, "field.constraint", json!("at most 600"), &[&d])?;
    // A rejected claim (confidence out of range) disagreeing.
    let mut doc = read_json(&out(run, "claims.json"));
    doc["claims"].as_array_mut().unwrap().push(hand_claim(
        "field.unit",
        json!("ms"),
        &[&u.test],
        7.0,
    ));
    write_json(&out(run, "claims.json"), &doc);
    let record = freeze(run)?;
    ensure!(
        record.conflicts.is_empty(),
        "a false conflict was recorded: {:?}",
        record.conflicts
    );
    Ok(())
}

/// `confidence` may be left out of a claim body; the claim is then stored with 1, a value
/// inside [0, 1], never one the parser would have refused had it been written.
fn default_confidence() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let body = json!({"predicate": "field.unit", "value": "s", "artifactIds": [a]});
    let c = rails::add_claim_json(&run, &body, None).map_err(failed)?;
    ensure!(
        c.confidence == 1.0,
        "stored with confidence {}",
        c.confidence
    );
    let stored = &read_json(&out(&run, "claims.json"))["claims"][0]["confidence"];
    ensure!(
        stored == &json!(1.0),
        "claims.json holds confidence {stored}"
    );
    Ok(())
}
