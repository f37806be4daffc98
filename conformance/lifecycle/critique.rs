//! R-LC-8 and R-LC-10: finalize refuses a critique edited to pass or written without a
//! validation record, and a single process's critique is `self`, never `independent`.

use anvil_bench::case::finalize::{Status, finalize};
use anvil_bench::case::rails;
use libtest_mimic::Failed;
use serde_json::json;

use crate::ensure;
use crate::support::*;

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
