//! R-VAL-3..6: grounding: the patched value is the grounding claims', strength is the
//! noisy-or of distinct files, a unit needs verified grounding, and an unresolved conflict
//! fails.

use std::path::{Path, PathBuf};

use libtest_mimic::Failed;
use serde_json::json;

use super::{check, fails_on, validated};
use crate::ensure;
use anvil_bench::case::research::{ClaimStatus, claim_id};

use crate::support::{
    World, claim, ev, externals, failed, freeze, frozen_unit, lifecycle_json, read_json,
    unit_proposal, unit_research, write_json, write_proposal,
};

pub(super) fn value_differs_from_claim() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    let record = validated(&u.run)?;
    fails_on(&record, "evidence_supports_value")
}

/// A proposal that also cites a claim of another value for the patched predicate is not
/// grounded on its value, even when another cited claim asserts it.
pub(super) fn grounding_citing_another_value_fails() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let d = ev(&u.run, "docs/payments.md", 3, 4)?;
    let other = claim(&u.run, "field.unit", json!("ms"), &[&d])?;
    freeze(&u.run)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim, &other]));
    let record = validated(&u.run)?;
    fails_on(&record, "evidence_supports_value")?;
    let detail = &check(&record.checks, "evidence_supports_value")?.detail;
    ensure!(
        detail.contains(&other),
        "the failure does not name the dissenting claim: {detail}"
    );
    Ok(())
}

/// A claim stage 1 rejected grounds nothing: the proposal's value is not asserted by an
/// accepted claim, whatever the rejected one says and cites.
pub(super) fn rejected_claim_grounds_nothing() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let ids = vec![u.implementation.clone()];
    // The grounding's value on its implementation excerpt, with a confidence outside
    // [0, 1]: rejected at freeze.
    let bad_id = claim_id("field.unit", &json!("s"), &ids);
    let claims_path = crate::support::out(&u.run, "claims.json");
    let mut doc = read_json(&claims_path);
    doc["claims"].as_array_mut().unwrap().push(json!({
        "id": bad_id, "predicate": "field.unit", "value": "s",
        "artifactIds": ids, "confidence": 1.5
    }));
    write_json(&claims_path, &doc);
    let research = freeze(&u.run)?;
    ensure!(
        research
            .claims
            .iter()
            .any(|c| c.id == bad_id && c.status == ClaimStatus::Rejected),
        "test setup: the hand-written claim was not rejected"
    );
    write_proposal(&u.run, &unit_proposal("s", &[&bad_id]));
    let record = validated(&u.run)?;
    fails_on(&record, "evidence_supports_value")
}

pub(super) fn supporting_claim_does_not_ground() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let t = ev(&run, "tests/test_capture.py", 6, 8)?;
    let support = claim(&run, "field.conversion", json!("s"), &[&a, &t])?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&support]));
    let record = validated(&run)?;
    fails_on(&record, "evidence_supports_value")
}

/// A frozen unit run whose only `field.unit = "s"` claim cites `coords`; proposal written.
fn unit_grounded_by(w: &World, coords: &[(&str, u32, u32)]) -> Result<PathBuf, Failed> {
    let run = w.open_unit()?.run_dir;
    let mut ids = Vec::new();
    for (p, s, e) in coords {
        ids.push(ev(&run, p, *s, *e)?);
    }
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let c = claim(&run, "field.unit", json!("s"), &refs)?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&c]));
    Ok(run)
}

fn strength_of(run: &Path) -> Option<f64> {
    lifecycle_json(run)["records"]["research"]["values"]
        .as_array()?
        .iter()
        .find(|v| v["predicate"] == "field.unit" && v["value"] == "s")?["strength"]
        .as_f64()
}

pub(super) fn lone_doc() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_grounded_by(&w, &[("docs/payments.md", 3, 4)])?;
    ensure!(
        strength_of(&run) == Some(0.6),
        "a lone doc has strength {:?}",
        strength_of(&run)
    );
    let record = validated(&run)?;
    fails_on(&record, "evidence_meets_minimum_strength")
}

/// A lone schema excerpt grounds `s` with strength 0.8, annotate-unit's bar exactly: the bar
/// is a minimum, so validation passes it and the proposal finalizes.
pub(super) fn exactly_at_the_bar() -> Result<(), Failed> {
    let w = World::new();
    let (schema, lines) = crate::support::seconds_schema(&w);
    let run = unit_grounded_by(&w, &[(schema, 1, lines)])?;
    ensure!(
        strength_of(&run) == Some(0.8),
        "a lone schema excerpt has strength {:?}, not 0.8",
        strength_of(&run)
    );
    let record = validated(&run)?;
    ensure!(
        check(&record.checks, "evidence_meets_minimum_strength")?.passed
            && record.verdict == anvil_bench::case::validate::Verdict::Pass,
        "grounding at the bar did not validate: {:?}",
        record.checks
    );
    let result = crate::support::rails::finalize(&run, None, None, None).map_err(failed)?;
    ensure!(
        result.status == anvil_bench::case::finalize::Status::ProposalGenerated,
        "grounding at the bar finalized as {:?}",
        result.status
    );
    Ok(())
}

pub(super) fn one_file_counts_once() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_grounded_by(
        &w,
        &[("docs/payments.md", 3, 4), ("docs/payments.md", 8, 9)],
    )?;
    ensure!(
        strength_of(&run) == Some(0.6),
        "two excerpts of one doc have strength {:?}, not 0.6",
        strength_of(&run)
    );
    let record = validated(&run)?;
    fails_on(&record, "evidence_meets_minimum_strength")
}

pub(super) fn noisy_or() -> Result<(), Failed> {
    // implementation 0.9 + contract_test 0.85 → 1 − 0.1 × 0.15 = 0.985: passes.
    let w = World::new();
    let run = unit_grounded_by(
        &w,
        &[
            ("src/payments/service.py", 32, 39),
            ("tests/test_capture.py", 6, 8),
        ],
    )?;
    ensure!(
        strength_of(&run).is_some_and(|s| (s - 0.985).abs() < 1e-9),
        "implementation + contract_test has strength {:?}, not 0.985",
        strength_of(&run)
    );
    let record = validated(&run)?;
    ensure!(
        check(&record.checks, "evidence_meets_minimum_strength")?.passed,
        "0.985 did not meet 0.8"
    );
    // doc 0.6 + comment 0.4 → 1 − 0.4 × 0.6 = 0.76: fails.
    let w = World::new();
    let run = unit_grounded_by(
        &w,
        &[
            ("docs/payments.md", 3, 4),
            ("src/payments/service.py", 35, 35),
        ],
    )?;
    ensure!(
        strength_of(&run).is_some_and(|s| (s - 0.76).abs() < 1e-9),
        "doc + comment has strength {:?}, not 0.76",
        strength_of(&run)
    );
    let record = validated(&run)?;
    fails_on(&record, "evidence_meets_minimum_strength")
}

/// Five distinct external pages (1 − 0.7⁵ ≈ 0.83 ≥ 0.8) ground `s`: the strength bar is met
/// but annotate-unit requires verified grounding for `unit`.
pub(super) fn external_only() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let ids = externals(&run, 5)?;
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let c = claim(&run, "field.unit", json!("s"), &refs)?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&c]));
    let record = validated(&run)?;
    ensure!(
        check(&record.checks, "evidence_meets_minimum_strength")?.passed,
        "test setup: five externals should meet the strength bar"
    );
    fails_on(&record, "evidence_meets_verification")
}

pub(super) fn unrelated_verified() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let ids = externals(&run, 5)?;
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let grounding = claim(&run, "field.unit", json!("s"), &refs)?;
    // Verified artifacts elsewhere in the case: a supporting claim, and even an accepted
    // `field.unit = "s"` claim the proposal does not cite.
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let t = ev(&run, "tests/test_capture.py", 6, 8)?;
    claim(
        &run,
        "field.conversion",
        json!("timedelta(seconds=...)"),
        &[&a],
    )?;
    claim(&run, "field.unit", json!("s"), &[&a, &t])?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&grounding]));
    let record = validated(&run)?;
    fails_on(&record, "evidence_meets_verification")
}

pub(super) fn conflict_fails() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let d = ev(&u.run, "docs/payments.md", 3, 4)?;
    claim(&u.run, "field.unit", json!("ms"), &[&d])?;
    let research = freeze(&u.run)?;
    ensure!(
        research.conflict_on("field.unit").is_some(),
        "test setup: no conflict recorded"
    );
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let record = validated(&u.run)?;
    ensure!(
        check(&record.checks, "evidence_supports_value")?.passed
            && check(&record.checks, "evidence_meets_minimum_strength")?.passed,
        "test setup: the grounding itself should be sound"
    );
    fails_on(&record, "no_unresolved_conflict")?;
    let e = crate::support::rails::finalize(&u.run, None, None, None);
    ensure!(e.is_err(), "a conflicted proposal finalized as generated");
    Ok(())
}

/// The conflict check follows the skill's own predicate for the patched field
/// (`error.retryable` for enrich-error), not a `field.` prefix: two accepted claims on
/// CARD_DECLINED's retryability, false and true, fail validation of a proposal of false
/// that is otherwise grounded.
pub(super) fn conflict_fails_for_an_error() -> Result<(), Failed> {
    let w = World::new();
    let target = "op.create_payment.error.CARD_DECLINED";
    let run = anvil_bench::case::open(&w.request("enrich-error", target))
        .map_err(crate::support::failed)?
        .run_dir;
    let a = ev(&run, "src/payments/service.py", 14, 16)?;
    let b = ev(&run, "src/payments/service.py", 45, 47)?;
    let c = ev(&run, "src/payments/service.py", 19, 21)?;
    let no = claim(&run, "error.retryable", json!(false), &[&a, &b])?;
    claim(&run, "error.retryable", json!(true), &[&c])?;
    let research = freeze(&run)?;
    ensure!(
        research.conflict_on("error.retryable").is_some(),
        "test setup: no conflict recorded: {:?}",
        research.conflicts
    );
    write_proposal(
        &run,
        &json!({
            "format": "anvil-proposal", "formatVersion": 1,
            "skill": "enrich-error", "skillVersion": 1,
            "deficiency": "error_retryability_unclear",
            "target": target,
            "patch": {"target": target, "set": {"retryable": false}},
            "grounding": {"retryable": [no]},
            "confidence": 0.9,
            "rationale": "the service raises CARD_DECLINED as a final decline"
        }),
    );
    let record = validated(&run)?;
    ensure!(
        check(&record.checks, "evidence_supports_value")?.passed,
        "test setup: the grounding itself should be sound: {:?}",
        record.checks
    );
    fails_on(&record, "no_unresolved_conflict")?;
    ensure!(
        crate::support::rails::finalize(&run, None, None, None).is_err(),
        "a conflicted proposal finalized as generated"
    );
    Ok(())
}

/// A second value asserted only on unverified external pages is still a second accepted
/// value: the conflict is recorded at freeze and validation of the verified value fails.
pub(super) fn unverified_dissent_is_a_conflict() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let pages = externals(&u.run, 2)?;
    let refs: Vec<&str> = pages.iter().map(String::as_str).collect();
    claim(&u.run, "field.unit", json!("ms"), &refs)?;
    let research = freeze(&u.run)?;
    ensure!(
        research.conflict_on("field.unit").is_some(),
        "two accepted values on field.unit, one only unverified, are no conflict: {:?}",
        research.values
    );
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let record = validated(&u.run)?;
    fails_on(&record, "no_unresolved_conflict")
}
