//! R-LC-8 and R-LC-10: finalize refuses a critique edited to pass or written without a
//! validation record, and a single process's critique is `self`, never `independent`.

use crate::support::rails;
use crate::support::rails::finalize;
use anvil_bench::case::finalize::Status;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::ensure;
use crate::support::{
    World, bytes_of, failed, frozen_unit, out, read_json, unit_proposal, write_json, write_proposal,
};

pub(super) fn critique_edited_to_pass() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    let mut c = read_json(&out(&u.run, "critique.json"));
    ensure!(
        c["verdict"] == "fail",
        "test setup: critique says {}",
        c["verdict"]
    );
    c["verdict"] = json!("pass");
    for check in c["checks"].as_array_mut().unwrap() {
        check["passed"] = json!(true);
    }
    write_json(&out(&u.run, "critique.json"), &c);
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    for status in [
        None,
        Some(Status::ProposalGenerated),
        Some(Status::InsufficientEvidence),
    ] {
        let e = finalize(&u.run, status, None, None);
        ensure!(
            e.as_ref().is_err_and(|e| e.kind() == "critique_disagrees"),
            "finalize {status:?} with an edited critique: {:?}",
            e.map(|r| r.status)
        );
    }
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc && !out(&u.run, "result.json").exists(),
        "a refused finalize wrote something"
    );
    Ok(())
}

/// critique.json edited anywhere (one check's detail or `passed`, a check dropped, its
/// format version or its time) while the verdict and the proposal hash stay as recorded:
/// the copy no longer is the record's review copy, so finalize refuses it. The untouched
/// copy then finalizes (the control).
pub(super) fn critique_edited_verdict_kept() -> Result<(), Failed> {
    type Edit = fn(&mut Value) -> bool;
    let edits: [(&str, Edit); 6] = [
        ("a failing check's detail rewritten", |c| {
            edit_check(c, false, |c| c["detail"] = json!("reviewed: fine"))
        }),
        ("a failing check marked passed", |c| {
            edit_check(c, false, |c| c["passed"] = json!(true))
        }),
        ("a passing check marked failed", |c| {
            edit_check(c, true, |c| c["passed"] = json!(false))
        }),
        ("a check dropped", |c| {
            c["checks"]
                .as_array_mut()
                .is_some_and(|a| a.pop().is_some())
        }),
        ("formatVersion raised to 2", |c| {
            c["formatVersion"] = json!(2);
            true
        }),
        ("its time changed", |c| {
            c["at"] = json!("2000-01-01T00:00:00.000Z");
            true
        }),
    ];
    let mut applied = [0; 6];
    for (value, verdict, status) in [
        ("ms", "fail", Some(Status::InsufficientEvidence)),
        ("s", "pass", None),
    ] {
        let w = World::new();
        let u = frozen_unit(&w)?;
        write_proposal(&u.run, &unit_proposal(value, &[&u.claim]));
        rails::validate(&u.run, None, false).map_err(failed)?;
        let path = out(&u.run, "critique.json");
        let original = read_json(&path);
        ensure!(
            original["verdict"] == verdict,
            "test setup: the critique of {value:?} says {}",
            original["verdict"]
        );
        let lc = bytes_of(&u.run.join("lifecycle.json"));
        for (i, (what, edit)) in edits.iter().enumerate() {
            let mut c = original.clone();
            if !edit(&mut c) {
                continue; // no check of that kind in this critique
            }
            applied[i] += 1;
            write_json(&path, &c);
            let e = finalize(&u.run, status, None, None);
            ensure!(
                e.as_ref().is_err_and(|e| e.kind() == "critique_disagrees"),
                "{verdict} critique, {what} (verdict and hash kept): finalize {:?}",
                e.map(|r| r.status)
            );
            ensure!(
                bytes_of(&u.run.join("lifecycle.json")) == lc
                    && !out(&u.run, "result.json").exists(),
                "{what}: a refused finalize wrote something"
            );
        }
        write_json(&path, &original);
        finalize(&u.run, status, None, None)
            .map_err(|e| failed(format!("the untouched {verdict} critique: {e}")))?;
    }
    ensure!(
        applied.iter().all(|&n| n > 0),
        "test setup: some edits found no check to edit: {applied:?}"
    );
    Ok(())
}

/// Applies `edit` to the critique's first check whose `passed` is `passed`; false when
/// there is none.
fn edit_check(critique: &mut Value, passed: bool, edit: impl FnOnce(&mut Value)) -> bool {
    let checks = critique["checks"].as_array_mut();
    match checks.and_then(|a| a.iter_mut().find(|c| c["passed"] == passed)) {
        Some(c) => {
            edit(c);
            true
        }
        None => false,
    }
}

pub(super) fn critique_without_record() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    write_json(
        &out(&u.run, "critique.json"),
        &json!({
            "format": "anvil-critique", "formatVersion": 1, "review": "independent",
            "verdict": "pass", "proposalHash": "sha256:00", "checks": [],
            "at": "2026-01-01T00:00:00.000Z"
        }),
    );
    for status in [
        Some(Status::ProposalGenerated),
        Some(Status::InsufficientEvidence),
    ] {
        let e = finalize(&u.run, status, None, None);
        ensure!(
            e.as_ref().is_err_and(|e| e.kind() == "critique_disagrees"),
            "finalize {status:?} with a hand-written critique: {:?}",
            e.map(|r| r.status)
        );
    }
    ensure!(!out(&u.run, "result.json").exists(), "result.json written");
    Ok(())
}

pub(super) fn critique_is_self() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    let c = read_json(&out(&u.run, "critique.json"));
    ensure!(
        c["review"] == "self",
        "critique.json review is {}",
        c["review"]
    );
    let result = finalize(&u.run, None, None, None).map_err(failed)?;
    let on_disk = read_json(&out(&u.run, "result.json"));
    ensure!(
        on_disk["critique"]["review"] == "self",
        "result.json critique review is {}",
        on_disk["critique"]["review"]
    );
    ensure!(
        result
            .critique
            .is_some_and(|c| c.review == rails::Review::SelfReview),
        "the result's critique is not labelled self"
    );
    Ok(())
}

/// The investigator relabels its own critique `independent` (verdict, checks and hash
/// untouched). A single process must never be reported as independent review.
pub(super) fn critique_relabelled() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    let mut c = read_json(&out(&u.run, "critique.json"));
    c["review"] = json!("independent");
    write_json(&out(&u.run, "critique.json"), &c);
    match finalize(&u.run, None, None, None) {
        Err(_) => Ok(()),
        Ok(result) => Err(format!(
            "finalize accepted a self-critique relabelled by hand; result.json reports review {:?}",
            result.critique.map(|c| c.review)
        )
        .into()),
    }
}
