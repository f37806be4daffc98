//! R-LC-1 and R-LC-2: legal transitions only (an illegal rail leaves lifecycle.json and
//! output/ byte-identical), and an honest decline straight from open.

use std::path::Path;

use crate::support::rails;
use crate::support::rails::finalize;
use anvil_bench::case::finalize::Status;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{decline, state};
use crate::ensure;
use crate::support::{
    World, add_ev, bytes_of, claim_input, failed, frozen_unit, lifecycle_json, msg, out, read_json,
    refused_as, tree, unit_proposal, unit_research, write_proposal,
};

/// The rail is refused as an illegal transition and lifecycle.json and output/ are
/// byte-identical afterwards.
fn illegal<T: std::fmt::Debug>(
    run: &Path,
    what: &str,
    f: impl FnOnce() -> Result<T, anvil_bench::case::CaseError>,
) -> Result<(), Failed> {
    let lc = bytes_of(&run.join("lifecycle.json"));
    let before = tree(&run.join("output"));
    refused_as(f(), "illegal_transition").map_err(|e| failed(format!("{what}: {}", msg(&e))))?;
    ensure!(
        bytes_of(&run.join("lifecycle.json")) == lc,
        "{what}: a refused transition changed lifecycle.json"
    );
    ensure!(
        tree(&run.join("output")) == before,
        "{what}: a refused transition changed output/"
    );
    Ok(())
}

pub(super) fn happy_path_transitions() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    ensure!(
        state(&u.run) == "research_frozen",
        "after freeze: {}",
        state(&u.run)
    );
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    ensure!(
        state(&u.run) == "proposal_frozen",
        "after validate: {}",
        state(&u.run)
    );
    finalize(&u.run, None, None, None).map_err(failed)?;
    ensure!(
        state(&u.run) == "finalized",
        "after finalize: {}",
        state(&u.run)
    );
    let moves: Vec<(Value, Value)> = lifecycle_json(&u.run)["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["from"].clone(), t["to"].clone()))
        .collect();
    ensure!(
        moves
            == [
                (Value::Null, json!("open")),
                (json!("open"), json!("research_frozen")),
                (json!("research_frozen"), json!("proposal_frozen")),
                (json!("proposal_frozen"), json!("finalized")),
            ],
        "transitions recorded: {moves:?}"
    );
    Ok(())
}

pub(super) fn validate_from_open() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    illegal(&u.run, "validate from open", || {
        rails::validate(&u.run, None, false)
    })?;
    illegal(&u.run, "validate --dry-run from open", || {
        rails::validate(&u.run, None, true)
    })
}

/// Research frozen, no proposal written: validate names what is missing (a rail refusal,
/// not an I/O failure) and leaves lifecycle.json and output/ as they were.
pub(super) fn validate_without_a_proposal() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    let before = tree(&u.run.join("output"));
    for dry_run in [false, true] {
        let e = refused_as(rails::validate(&u.run, None, dry_run), "missing_output")?;
        ensure!(
            e.to_string().contains("proposal.json"),
            "the refusal does not name proposal.json: {e}"
        );
    }
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc && tree(&u.run.join("output")) == before,
        "a refused validate changed lifecycle.json or output/"
    );
    Ok(())
}

pub(super) fn freeze_twice() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    illegal(&u.run, "freeze-research again", || {
        rails::freeze_research(&u.run, None)
    })
}

pub(super) fn validate_twice() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    illegal(&u.run, "validate again", || {
        rails::validate(&u.run, None, false)
    })
}

pub(super) fn finalized_refuses_everything() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    decline(&u.run, Status::InsufficientEvidence).map_err(failed)?;
    ensure!(state(&u.run) == "finalized", "state {}", state(&u.run));
    illegal(&u.run, "finalize again", || {
        decline(&u.run, Status::BlockedByMissingSource)
    })?;
    illegal(&u.run, "add-evidence", || {
        add_ev(&u.run, "docs/payments.md", Some((3, 4)))
    })?;
    illegal(&u.run, "add-claim", || {
        rails::add_claim(
            &u.run,
            claim_input("field.unit", json!("ms"), &[&u.test]),
            None,
        )
    })?;
    illegal(&u.run, "freeze-research", || {
        rails::freeze_research(&u.run, None)
    })?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    illegal(&u.run, "validate", || rails::validate(&u.run, None, false))
}

pub(super) fn research_rails_after_freeze() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    illegal(&u.run, "add-evidence", || {
        add_ev(&u.run, "docs/payments.md", Some((3, 4)))
    })?;
    illegal(&u.run, "add-external-evidence", || {
        rails::add_external_evidence(
            &u.run,
            "wiki",
            "https://wiki.example/x",
            "in seconds\n",
            None,
        )
    })?;
    illegal(&u.run, "add-claim", || {
        rails::add_claim(
            &u.run,
            claim_input("field.unit", json!("ms"), &[&u.test]),
            None,
        )
    })
}

pub(super) fn decline_from_open() -> Result<(), Failed> {
    for status in [Status::InsufficientEvidence, Status::BlockedByMissingSource] {
        let w = World::new();
        let run = w.open_unit()?.run_dir;
        ensure!(state(&run) == "open", "test setup");
        let result = decline(&run, status).map_err(|e| failed(format!("{status}: {e}")))?;
        ensure!(result.status == status, "finalized as {}", result.status);
        ensure!(
            state(&run) == "finalized",
            "{status}: state {}",
            state(&run)
        );
        let on_disk = read_json(&out(&run, "result.json"));
        ensure!(
            on_disk["status"] == status.as_str() && on_disk.get("patch").is_none(),
            "{status}: result.json is {on_disk}"
        );
    }
    Ok(())
}

/// Declining straight from open, with evidence and a claim deposited, freezes both files
/// with the result (their hashes in lifecycle.json), so an edit made afterwards is
/// tampering that close refuses.
pub(super) fn decline_from_open_freezes_research() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    ensure!(state(&u.run) == "open", "test setup");
    decline(&u.run, Status::InsufficientEvidence).map_err(failed)?;
    let lc = lifecycle_json(&u.run);
    for rel in ["output/evidence.json", "output/claims.json"] {
        let bytes = bytes_of(&u.run.join(rel)).ok_or(format!("test setup: no {rel}"))?;
        ensure!(
            lc["frozen"][rel] == anvil_bench::canon::bytes_hash(&bytes),
            "{rel} is not frozen with its hash: frozen = {}",
            lc["frozen"]
        );
    }
    let path = out(&u.run, "claims.json");
    let mut claims = read_json(&path);
    claims["claims"][0]["confidence"] = json!(0.1);
    crate::support::write_json(&path, &claims);
    match rails::close(
        &u.run,
        &anvil_bench::reconcile::CloseRequest::default(),
        None,
    ) {
        Ok(doc) => Err(format!(
            "close accepted claims.json edited after a decline from open: {:?}",
            doc.status
        )
        .into()),
        Err(e) => {
            ensure!(
                e.to_string().contains("claims.json"),
                "the refusal does not name claims.json: {e}"
            );
            Ok(())
        }
    }
}
