//! R-LC-6 and R-LC-7: `supported` only with proof of exactly the current value, and never
//! for a value that is missing.

use std::path::Path;

use anvil_bench::case::finalize::Status;
use libtest_mimic::Failed;
use serde_json::json;

use super::decline;
use crate::ensure;
use crate::support::*;

/// The inferred-unit case (current value `s`) with research from `research`, frozen;
/// `supported` must be refused and nothing written.
pub(super) fn supported_refused(
    research: impl FnOnce(&Path) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let w = World::new();
    let run = open_inferred_unit(&w)?;
    research(&run)?;
    freeze(&run)?;
    let lc = bytes_of(&run.join("lifecycle.json"));
    refused_as(decline(&run, Status::Supported), "unproven_support")?;
    ensure!(
        bytes_of(&run.join("lifecycle.json")) == lc && !out(&run, "result.json").exists(),
        "a refused `supported` wrote something"
    );
    Ok(())
}

pub(super) fn supported_with_proof() -> Result<(), Failed> {
    let w = World::new();
    let run = open_inferred_unit(&w)?;
    let case = read_json(&run.join("case.json"));
    ensure!(
        case["target"]["current"]["unit"] == "s",
        "test setup: no current unit in {}",
        case["target"]["current"]
    );
    let u = unit_research_in(run)?;
    freeze(&u.run)?;
    let result = decline(&u.run, Status::Supported).map_err(failed)?;
    ensure!(
        result.status == Status::Supported,
        "status {}",
        result.status
    );
    ensure!(result.patch.is_none(), "supported carries a patch");
    let proof = result
        .supported
        .ok_or("supported without a recorded proof")?;
    ensure!(
        proof.field == "unit" && proof.value == json!("s") && proof.claim_ids == [u.claim.clone()],
        "proof is {proof:?}"
    );
    ensure!(
        proof.strength >= 0.8 && proof.verified_strength >= 0.8,
        "proof strength {proof:?}"
    );
    Ok(())
}

pub(super) fn supported_with_patch() -> Result<(), Failed> {
    let w = World::new();
    let run = open_inferred_unit(&w)?;
    let u = unit_research_in(run)?;
    freeze(&u.run)?;
    let mut p = unit_proposal("s", &[&u.claim]);
    p["deficiency"] = json!("unproven_inferred_value");
    write_proposal(&u.run, &p);
    refused_as(decline(&u.run, Status::Supported), "unproven_support")?;
    ensure!(!out(&u.run, "result.json").exists(), "result.json written");
    Ok(())
}

pub(super) fn missing_value_never_supported() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let case = read_json(&u.run.join("case.json"));
    ensure!(
        case["target"]["current"]["unit"].is_null(),
        "test setup: the unit is not missing"
    );
    // Strong, verified research for `s` is frozen, but there is no current value.
    let e = refused_as(decline(&u.run, Status::Supported), "unproven_support")?;
    ensure!(
        e.to_string().contains("unit"),
        "the refusal does not say which value is missing: {e}"
    );
    ensure!(!out(&u.run, "result.json").exists(), "result.json written");
    let o = rail_cli(&w, "finalize", &u.run, &["--status", "supported"]);
    ensure!(o.status.code() == Some(1), "CLI exit {:?}", o.status.code());
    Ok(())
}
