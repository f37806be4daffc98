//! R-LC-3 and R-LC-4: freezing records the hash of each frozen file, and an edit or
//! deletion of a frozen file is detected by the next rail.

use crate::support::rails;
use crate::support::rails::finalize;
use anvil_bench::case::finalize::Status;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::decline;
use crate::ensure;
use crate::support::{
    World, bytes_of, failed, frozen_unit, lifecycle_json, msg, out, read_json, refused_as,
    unit_proposal, write_json, write_proposal,
};

pub(super) fn freeze_hashes() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let hash = |rel: &str| anvil_bench::canon::bytes_hash(&std::fs::read(u.run.join(rel)).unwrap());
    let lc = lifecycle_json(&u.run);
    for rel in ["output/evidence.json", "output/claims.json"] {
        ensure!(
            lc["frozen"][rel] == hash(rel),
            "{rel} frozen as {}, file hashes {}",
            lc["frozen"][rel],
            hash(rel)
        );
    }
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    finalize(&u.run, None, None, None).map_err(failed)?;
    let lc = lifecycle_json(&u.run);
    for rel in [
        "output/evidence.json",
        "output/claims.json",
        "output/proposal.json",
        "output/result.json",
    ] {
        ensure!(
            lc["frozen"][rel] == hash(rel),
            "{rel} frozen as {}, file hashes {}",
            lc["frozen"][rel],
            hash(rel)
        );
    }
    Ok(())
}

fn expect_tamper<T: std::fmt::Debug>(
    what: &str,
    file: &str,
    r: Result<T, anvil_bench::case::CaseError>,
) -> Result<(), Failed> {
    let e = refused_as(r, "tamper").map_err(|e| failed(format!("{what}: {}", msg(&e))))?;
    ensure!(
        e.to_string().contains(file),
        "{what}: the tamper error does not name {file}: {e}"
    );
    Ok(())
}

pub(super) fn claims_tamper() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let mut doc = read_json(&out(&u.run, "claims.json"));
    doc["claims"][0]["confidence"] = json!(1.0);
    write_json(&out(&u.run, "claims.json"), &doc);
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    expect_tamper(
        "validate",
        "output/claims.json",
        rails::validate(&u.run, None, false),
    )?;
    expect_tamper(
        "finalize",
        "output/claims.json",
        decline(&u.run, Status::InsufficientEvidence),
    )?;
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc,
        "a tampered run moved on"
    );
    ensure!(
        !out(&u.run, "critique.json").exists() && !out(&u.run, "result.json").exists(),
        "a tampered run produced output"
    );
    Ok(())
}

pub(super) fn deleted_frozen() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    std::fs::remove_file(out(&u.run, "claims.json")).unwrap();
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    expect_tamper(
        "validate",
        "output/claims.json",
        rails::validate(&u.run, None, false),
    )
}

pub(super) fn proposal_tamper() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    // A later edit: same value, another rationale; and one to another value.
    let edits: [fn(&mut Value); 2] = [
        |p| p["rationale"] = json!("edited after validation"),
        |p| p["patch"]["set"]["unit"] = json!("ms"),
    ];
    for edit in edits {
        let mut p = read_json(&out(&u.run, "proposal.json"));
        let original = bytes_of(&out(&u.run, "proposal.json")).unwrap();
        edit(&mut p);
        write_proposal(&u.run, &p);
        expect_tamper(
            "finalize",
            "output/proposal.json",
            finalize(&u.run, None, None, None),
        )?;
        ensure!(
            !out(&u.run, "result.json").exists(),
            "a tampered proposal produced a result"
        );
        std::fs::write(out(&u.run, "proposal.json"), original).unwrap();
    }
    // Restored byte for byte, the run finalizes.
    finalize(&u.run, None, None, None).map_err(failed)?;
    Ok(())
}
