//! R-LC-5 and R-LC-9: `proposal_generated` only with a passing validation record, and
//! every decline carrying the artifacts, claims, conflicts and critique it learned.

use crate::support::rails;
use crate::support::rails::finalize;
use anvil_bench::case::finalize::Status;
use libtest_mimic::Failed;
use serde_json::json;

use super::decline;
use crate::ensure;
use crate::support::{
    World, bytes_of, claim, ev, failed, freeze, frozen_unit, out, rail_cli, read_json, refused_as,
    unit_proposal, unit_research, write_proposal,
};

pub(super) fn generated_without_record() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    refused_as(
        finalize(&u.run, Some(Status::ProposalGenerated), None, None),
        "not_validated",
    )?;
    refused_as(finalize(&u.run, None, None, None), "status_required")?;
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc && !out(&u.run, "result.json").exists(),
        "a refused finalize wrote something"
    );
    Ok(())
}

pub(super) fn generated_after_fail() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    let record = rails::validate(&u.run, None, false).map_err(failed)?;
    ensure!(
        record.verdict == anvil_bench::case::validate::Verdict::Fail,
        "test setup: the proposal passed"
    );
    refused_as(
        finalize(&u.run, Some(Status::ProposalGenerated), None, None),
        "validation_failed",
    )?;
    refused_as(finalize(&u.run, None, None, None), "status_required")?;
    ensure!(
        !out(&u.run, "result.json").exists(),
        "a refused finalize wrote result.json"
    );
    let o = rail_cli(&w, "finalize", &u.run, &["--status", "proposal_generated"]);
    ensure!(o.status.code() == Some(1), "CLI exit {:?}", o.status.code());
    Ok(())
}

pub(super) fn conflicted_carries_everything() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let d = ev(&u.run, "docs/payments.md", 3, 4)?;
    let ms = claim(&u.run, "field.unit", json!("ms"), &[&d])?;
    freeze(&u.run)?;
    let result = decline(&u.run, Status::Conflicted).map_err(failed)?;
    ensure!(result.patch.is_none(), "a decline carries a patch");
    let ids: Vec<&str> = result.artifacts.iter().map(|a| a.id.as_str()).collect();
    for id in [&u.implementation, &u.test, &d] {
        ensure!(
            ids.contains(&id.as_str()),
            "artifact {id} missing from result"
        );
    }
    ensure!(
        result.artifacts.iter().all(|a| !a.excerpt.is_empty()),
        "artifacts lost their excerpts"
    );
    let cids: Vec<&str> = result.claims.iter().map(|c| c.id.as_str()).collect();
    ensure!(
        cids.contains(&u.claim.as_str()) && cids.contains(&ms.as_str()),
        "claims missing from result: {cids:?}"
    );
    ensure!(
        result.claim_verdicts.len() == 2,
        "claim verdicts: {:?}",
        result.claim_verdicts
    );
    ensure!(
        result.conflicts.len() == 1 && result.conflicts[0].values.len() == 2,
        "conflicts: {:?}",
        result.conflicts
    );
    let on_disk = read_json(&out(&u.run, "result.json"));
    for key in ["artifacts", "claims", "claimVerdicts", "conflicts"] {
        ensure!(
            on_disk[key].as_array().is_some_and(|a| !a.is_empty()),
            "result.json has no {key}"
        );
    }
    Ok(())
}

pub(super) fn decline_carries_critique() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    let result = decline(&u.run, Status::InsufficientEvidence).map_err(failed)?;
    ensure!(result.patch.is_none(), "a decline carries a patch");
    let critique = result.critique.ok_or("the decline dropped the critique")?;
    ensure!(
        critique.verdict == anvil_bench::case::validate::Verdict::Fail
            && critique.checks.iter().any(|c| !c.passed),
        "critique {critique:?}"
    );
    ensure!(
        result.validation.is_some(),
        "the decline dropped the validation record"
    );
    ensure!(
        result.artifacts.len() == 2 && result.claims.len() == 1 && result.claim_verdicts.len() == 1,
        "the decline dropped research: {} artifacts, {} claims",
        result.artifacts.len(),
        result.claims.len()
    );
    Ok(())
}
