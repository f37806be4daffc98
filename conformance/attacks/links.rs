//! X-LINK: symlinks and special files planted where the engine reads. A symlink is the
//! agent's way to make the engine — which may see more than the agent does, the labels
//! for one — read or write somewhere else; a FIFO is its way to hang it. Each is refused
//! by name, never followed, opened or written through, and nothing of a link's target
//! reaches the run's records.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use libtest_mimic::Failed;
use serde_json::json;

use super::{
    SECRET, cli_within, files_containing, mkfifo, outside, rail, refused, reported, secret_file,
    snapshot, verifies, verify,
};
use crate::support::{
    UnitRun, World, frozen_unit, lifecycle_json, out, unit_proposal, unit_research, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "attacks::a_proposal_symlinked_to_a_secret_outside_the_run_is_refused_not_followed",
            rules: &["X-LINK-1"],
            run: proposal_link,
        },
        Check {
            name: "attacks::claims_symlinked_outside_the_run_are_refused_by_add_claim_and_freeze",
            rules: &["X-LINK-1"],
            run: claims_link,
        },
        Check {
            name: "attacks::evidence_symlinked_outside_the_run_is_refused_and_never_written_through",
            rules: &["X-LINK-1"],
            run: evidence_link,
        },
        Check {
            name: "attacks::frozen_evidence_swapped_for_a_symlink_to_the_same_bytes_is_tampering",
            rules: &["X-LINK-1", "X-TAMP-5"],
            run: frozen_evidence_link,
        },
        Check {
            name: "attacks::a_proposal_that_is_a_fifo_is_refused_without_hanging",
            rules: &["X-LINK-2"],
            run: proposal_fifo,
        },
        Check {
            name: "attacks::a_journal_that_is_a_fifo_is_refused_without_hanging",
            rules: &["X-LINK-2", "X-LINK-3"],
            run: journal_fifo,
        },
        Check {
            name: "attacks::a_lock_that_is_a_fifo_is_refused_without_hanging",
            rules: &["X-LINK-2", "X-TAMP-4"],
            run: lock_fifo,
        },
        Check {
            name: "attacks::a_journal_symlinked_outside_the_run_is_refused_and_never_appended_through",
            rules: &["X-LINK-3"],
            run: || engine_file_link("journal.jsonl"),
        },
        Check {
            name: "attacks::a_lifecycle_symlinked_outside_the_run_is_refused",
            rules: &["X-LINK-3"],
            run: || engine_file_link("lifecycle.json"),
        },
        Check {
            name: "attacks::a_case_json_symlinked_to_a_secret_is_refused_and_never_echoed",
            rules: &["X-LINK-3", "X-TAMP-1"],
            run: case_link,
        },
        Check {
            name: "attacks::an_output_dir_swapped_for_a_symlink_is_refused_and_nothing_passes_through_it",
            rules: &["X-LINK-4"],
            run: output_dir_link,
        },
        Check {
            name: "attacks::an_output_dir_replaced_by_a_file_is_refused_by_name",
            rules: &["X-LINK-4"],
            run: output_dir_file,
        },
    ]
}

/// Nothing of the secret is anywhere in the run's records.
fn unleaked(run: &Path) -> Result<(), Failed> {
    let hits = files_containing(run, SECRET);
    ensure!(hits.is_empty(), "the secret reached the run: {hits:?}");
    Ok(())
}

fn proposal_link() -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| frozen_unit(&w))?;
    // The link's target is a proposal that would pass, carrying the secret.
    let mut p = unit_proposal("s", &[&u.claim]);
    p["rationale"] = json!(format!("timedelta(seconds=...) {SECRET}"));
    let secret = secret_file(&w, "create_payment.json", &p.to_string());
    symlink(&secret, out(&u.run, "proposal.json")).unwrap();
    let world = outside(&w, &u.run);
    for args in [&["--dry-run"][..], &[][..]] {
        let o = rail(&w, "validate", &u.run, args);
        refused(&o, "io", &["output/proposal.json", "symlink"])?;
    }
    ensure!(
        lifecycle_json(&u.run)["state"] == "research_frozen",
        "a refused validate moved the run"
    );
    unleaked(&u.run)?;
    verifies(&w, &u.run)?;
    ensure!(outside(&w, &u.run) == world, "the world changed");
    Ok(())
}

fn claims_link() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = crate::support::ev(&run, "src/payments/service.py", 32, 39)?;
    let doc = json!({"format": "anvil-claims", "formatVersion": 1, "claims": [{
        "id": "cl-000000000000000000000000", "predicate": "field.conversion",
        "value": SECRET, "artifactIds": [a], "confidence": 1.0}]});
    let secret = secret_file(&w, "claims.json", &doc.to_string());
    std::fs::remove_file(out(&run, "claims.json")).ok();
    symlink(&secret, out(&run, "claims.json")).unwrap();
    let world = outside(&w, &run);
    let o = rail(
        &w,
        "add-claim",
        &run,
        &[
            "--predicate",
            "field.unit",
            "--value",
            "\"s\"",
            "--artifact",
            &a,
        ],
    );
    refused(&o, "io", &["output/claims.json", "symlink"])?;
    let o = rail(&w, "freeze-research", &run, &[]);
    refused(&o, "io", &["output/claims.json", "symlink"])?;
    ensure!(
        lifecycle_json(&run)["state"] == "open",
        "a refused freeze moved the run"
    );
    unleaked(&run)?;
    verifies(&w, &run)?;
    ensure!(outside(&w, &run) == world, "the world changed");
    Ok(())
}

fn evidence_link() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let secret = secret_file(&w, "evidence.json", &format!("{{\"note\": \"{SECRET}\"}}"));
    symlink(&secret, out(&run, "evidence.json")).unwrap();
    let world = outside(&w, &run);
    let o = rail(
        &w,
        "add-evidence",
        &run,
        &[
            "--path",
            "src/payments/service.py",
            "--start-line",
            "32",
            "--end-line",
            "39",
        ],
    );
    refused(&o, "io", &["output/evidence.json", "symlink"])?;
    ensure!(
        std::fs::symlink_metadata(out(&run, "evidence.json"))
            .is_ok_and(|m| m.file_type().is_symlink()),
        "the planted link was replaced: the rail wrote past its refusal"
    );
    unleaked(&run)?;
    verifies(&w, &run)?;
    ensure!(
        outside(&w, &run) == world,
        "the link's target (or the world) changed"
    );
    Ok(())
}

fn frozen_evidence_link() -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| frozen_unit(&w))?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    // The very bytes that were frozen, now behind a link the agent controls.
    let copy = secret_file(
        &w,
        "evidence-copy.json",
        &std::fs::read_to_string(out(&u.run, "evidence.json")).unwrap(),
    );
    std::fs::remove_file(out(&u.run, "evidence.json")).unwrap();
    symlink(&copy, out(&u.run, "evidence.json")).unwrap();
    let world = outside(&w, &u.run);
    let o = rail(&w, "validate", &u.run, &[]);
    refused(&o, "tamper", &["output/evidence.json"])?;
    reported(&w, &u.run, "output/evidence.json", None)?;
    ensure!(outside(&w, &u.run) == world, "the world changed");
    Ok(())
}

fn proposal_fifo() -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| frozen_unit(&w))?;
    mkfifo(&out(&u.run, "proposal.json"));
    let world = outside(&w, &u.run);
    let run = u.run.to_str().unwrap();
    for dry in [true, false] {
        let mut args = vec!["case", "validate", run, "--json"];
        if dry {
            args.push("--dry-run");
        }
        let o = cli_within(&w, &args, 20)?;
        refused(&o, "io", &["output/proposal.json", "not a regular file"])?;
    }
    ensure!(
        lifecycle_json(&u.run)["state"] == "research_frozen",
        "a refused validate moved the run"
    );
    let v = cli_within(&w, &["case", "verify", run, "--json"], 20)?;
    ensure!(
        v.status.code() == Some(0),
        "a FIFO the engine never read made verify fail"
    );
    ensure!(outside(&w, &u.run) == world, "the world changed");
    Ok(())
}

/// Replaces `rel` of a research run with a FIFO; the next rail and `case verify` must
/// both refuse within the deadline.
fn engine_fifo(rel: &str, names: &[&str]) -> Result<(), Failed> {
    let w = World::new();
    let u: UnitRun = super::quick(|| unit_research(&w))?;
    std::fs::remove_file(u.run.join(rel)).unwrap();
    mkfifo(&u.run.join(rel));
    let world = outside(&w, &u.run);
    let run = u.run.to_str().unwrap();
    let o = cli_within(
        &w,
        &[
            "case",
            "add-evidence",
            run,
            "--path",
            "docs/payments.md",
            "--json",
        ],
        20,
    )?;
    refused(&o, "io", names)?;
    let v = cli_within(&w, &["case", "verify", run, "--json"], 20)?;
    ensure!(
        v.status.code() == Some(1),
        "verify passed a run whose {rel} is a FIFO"
    );
    ensure!(outside(&w, &u.run) == world, "the world changed");
    Ok(())
}

fn journal_fifo() -> Result<(), Failed> {
    engine_fifo("journal.jsonl", &["journal.jsonl", "not a regular file"])
}

fn lock_fifo() -> Result<(), Failed> {
    engine_fifo(".lock", &[".lock", "not a regular file"])
}

/// Replaces an engine-owned file with a symlink to a byte-identical copy outside the run:
/// the rail refuses (never reading or appending through the link) and verify fails.
fn engine_file_link(rel: &str) -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| unit_research(&w))?;
    let copy: PathBuf = secret_file(
        &w,
        &format!("copy-of-{rel}"),
        &std::fs::read_to_string(u.run.join(rel)).unwrap(),
    );
    std::fs::remove_file(u.run.join(rel)).unwrap();
    symlink(&copy, u.run.join(rel)).unwrap();
    let world = outside(&w, &u.run);
    let o = rail(&w, "add-evidence", &u.run, &["--path", "docs/payments.md"]);
    refused(&o, "io", &[rel, "symlink"])?;
    let (code, doc) = verify(&w, &u.run);
    ensure!(
        code == Some(1),
        "verify passed a run whose {rel} is a symlink: {doc}"
    );
    ensure!(
        outside(&w, &u.run) == world,
        "something was written through the link"
    );
    Ok(())
}

fn case_link() -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| unit_research(&w))?;
    // A document whose parse error would quote the secret back, were it read.
    let secret = secret_file(
        &w,
        "case-secret.json",
        &json!({"formatVersion": SECRET}).to_string(),
    );
    std::fs::remove_file(u.run.join("case.json")).unwrap();
    symlink(&secret, u.run.join("case.json")).unwrap();
    let world = outside(&w, &u.run);
    let run = u.run.to_str().unwrap();
    let o = rail(&w, "add-evidence", &u.run, &["--path", "docs/payments.md"]);
    refused(&o, "io", &["case.json", "symlink"])?;
    for cmd in [
        &["case", "verify", run][..],
        &["case", "show", run][..],
        &["case", "validate", run, "--dry-run"][..],
    ] {
        let o = w.cli(cmd);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        ensure!(
            o.status.code() == Some(1) && !said.contains(SECRET),
            "`{}` read through the link (exit {:?}): {said}",
            cmd[1],
            o.status.code()
        );
    }
    unleaked(&u.run)?;
    ensure!(outside(&w, &u.run) == world, "the world changed");
    Ok(())
}

fn output_dir_link() -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| unit_research(&w))?;
    // output/ moves outside the run (with the engine's own files in it) and a link
    // takes its place; decoys named like engine leftovers sit beside them.
    let elsewhere = w.root().join("labels").join("elsewhere");
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    std::fs::rename(u.run.join("output"), &elsewhere).unwrap();
    std::fs::write(elsewhere.join(".evidence.json.pending-9"), SECRET).unwrap();
    std::fs::write(elsewhere.join(".claims.json.tmp-01"), SECRET).unwrap();
    symlink(&elsewhere, u.run.join("output")).unwrap();
    let world = outside(&w, &u.run);
    let there = snapshot(&elsewhere);
    for (rail_name, args) in [
        (
            "add-evidence",
            &[
                "--path",
                "src/payments/service.py",
                "--start-line",
                "1",
                "--end-line",
                "3",
            ][..],
        ),
        ("freeze-research", &[][..]),
    ] {
        let o = rail(&w, rail_name, &u.run, args);
        refused(&o, "tamper", &["output", "symlink"])?;
    }
    ensure!(
        snapshot(&elsewhere) == there && outside(&w, &u.run) == world,
        "the engine read, wrote or deleted through the output/ link"
    );
    reported(&w, &u.run, "output", None)?;
    ensure!(
        snapshot(&elsewhere) == there,
        "verify swept files through the output/ link"
    );
    Ok(())
}

/// output/ replaced by a plain file: the rails refuse, naming output/ as not a directory,
/// and verify reports it, rather than failing on whatever read came first.
fn output_dir_file() -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| unit_research(&w))?;
    std::fs::remove_dir_all(u.run.join("output")).unwrap();
    std::fs::write(u.run.join("output"), "not a directory").unwrap();
    let o = rail(&w, "freeze-research", &u.run, &[]);
    refused(&o, "tamper", &["output", "not a directory"])?;
    reported(&w, &u.run, "output", None)
}
