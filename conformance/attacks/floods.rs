//! X-FLOOD: giant and deeply nested input. A document nested 10,000 deep, a claim value
//! nested just under the parser's limit (which the engine would otherwise store one level
//! deeper, where it can no longer read it back), a claim value of megabytes, and run
//! documents past the size cap are each refused by name, with no panic or stack overflow,
//! and nothing huge is copied into lifecycle.json or the journal.

use std::path::Path;

use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{outside, rail, refused, verifies};
use crate::support::{
    World, ev, frozen_unit, journal, lifecycle_json, out, read_json, unit_proposal, unit_research,
    write_json,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "attacks::a_claims_json_nested_ten_thousand_deep_is_refused_by_name_at_freeze",
            rules: &["X-FLOOD-1", "R-PARSE-7"],
            run: deep_claims_json,
        },
        Check {
            name: "attacks::a_proposal_nested_ten_thousand_deep_is_refused_by_name_at_validate",
            rules: &["X-FLOOD-1", "R-PARSE-7"],
            run: deep_proposal,
        },
        Check {
            name: "attacks::a_claim_value_nested_ten_thousand_deep_is_refused_by_the_cli",
            rules: &["X-FLOOD-1"],
            run: || deep_cli_value(10_000),
        },
        Check {
            name: "attacks::a_claim_value_just_under_the_parser_limit_is_refused_and_cannot_brick_the_run",
            rules: &["X-FLOOD-1"],
            run: || deep_cli_value(127),
        },
        Check {
            name: "attacks::a_huge_claim_value_is_refused_by_name_at_the_rail",
            rules: &["X-FLOOD-2"],
            run: huge_cli_value,
        },
        Check {
            name: "attacks::a_huge_value_in_a_hand_written_claims_json_is_rejected_and_never_copied",
            rules: &["X-FLOOD-2", "R-CL-5"],
            run: huge_hand_written_value,
        },
        Check {
            name: "attacks::an_evidence_json_past_the_size_cap_is_refused_by_name_unread",
            rules: &["X-FLOOD-2"],
            run: || giant("output/evidence.json", 0),
        },
        Check {
            name: "attacks::a_journal_past_the_size_cap_is_refused_by_name_unread",
            rules: &["X-FLOOD-2", "X-TAMP-3"],
            run: || giant("journal.jsonl", 1),
        },
    ]
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn deep_claims_json() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let text = format!(
        r#"{{"format": "anvil-claims", "formatVersion": 1, "claims": [{{"id": "cl-000000000000000000000000",
        "predicate": "field.conversion", "value": {}, "artifactIds": ["{a}"], "confidence": 1.0}}]}}"#,
        nested(10_000)
    );
    std::fs::write(out(&run, "claims.json"), text).unwrap();
    let world = outside(&w, &run);
    let o = rail(&w, "freeze-research", &run, &[]);
    refused(&o, "rejected_document", &["output/claims.json"])?;
    ensure!(
        lifecycle_json(&run)["state"] == "open",
        "a refused freeze moved the run"
    );
    verifies(&w, &run)?;
    ensure!(outside(&w, &run) == world, "the world changed");
    Ok(())
}

fn deep_proposal() -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| frozen_unit(&w))?;
    let text = unit_proposal("s", &[&u.claim]).to_string().replacen(
        "\"unit\":\"s\"",
        &format!("\"unit\":{}", nested(10_000)),
        1,
    );
    ensure!(text.len() > 20_000, "fixture: nothing was nested");
    std::fs::write(out(&u.run, "proposal.json"), text).unwrap();
    for args in [&["--dry-run"][..], &[][..]] {
        let o = rail(&w, "validate", &u.run, args);
        refused(&o, "rejected_document", &["output/proposal.json"])?;
    }
    ensure!(
        lifecycle_json(&u.run)["state"] == "research_frozen",
        "a refused validate moved the run"
    );
    verifies(&w, &u.run)
}

/// A claim value nested `depth` deep through `add-claim --value`: refused naming the
/// value, and afterwards the run still takes a claim and freezes.
fn deep_cli_value(depth: usize) -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let value = nested(depth);
    let o = rail(
        &w,
        "add-claim",
        &run,
        &[
            "--predicate",
            "field.conversion",
            "--value",
            &value,
            "--artifact",
            &a,
        ],
    );
    refused(&o, "rejected_document", &["add-claim", "value"])?;
    still_usable(&w, &run, &a)
}

/// The run still takes a claim and freezes, and verifies.
fn still_usable(w: &World, run: &Path, artifact: &str) -> Result<(), Failed> {
    let o = rail(
        w,
        "add-claim",
        run,
        &[
            "--predicate",
            "field.conversion",
            "--value",
            "\"seconds\"",
            "--artifact",
            artifact,
        ],
    );
    ensure!(
        o.status.code() == Some(0),
        "the run takes no claim after the refusal: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let o = rail(w, "freeze-research", run, &[]);
    ensure!(
        o.status.code() == Some(0),
        "the run cannot freeze after the refusal: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    verifies(w, run)
}

fn huge_cli_value() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    // Under the kernel's 128 KiB limit for one argument, over the engine's for a value.
    let value = format!("\"{}\"", "seconds ".repeat(12_000));
    let o = rail(
        &w,
        "add-claim",
        &run,
        &[
            "--predicate",
            "field.conversion",
            "--value",
            &value,
            "--artifact",
            &a,
        ],
    );
    refused(&o, "rejected_document", &["add-claim", "value"])?;
    let journal_bytes = std::fs::metadata(run.join("journal.jsonl")).unwrap().len();
    ensure!(
        journal_bytes < 16 << 10,
        "the refusal copied the value into the journal ({journal_bytes} bytes)"
    );
    still_usable(&w, &run, &a)
}

fn huge_hand_written_value() -> Result<(), Failed> {
    let w = World::new();
    let u = super::quick(|| unit_research(&w))?;
    let path = out(&u.run, "claims.json");
    let mut doc = read_json(&path);
    let value = json!("seconds ".repeat(512 << 10));
    let ids = vec![u.implementation.clone()];
    let id = anvil_bench::case::research::claim_id("field.conversion", &value, &ids);
    doc["claims"].as_array_mut().unwrap().push(json!({
        "id": id, "predicate": "field.conversion", "value": value,
        "artifactIds": ids, "confidence": 0.9,
    }));
    write_json(&path, &doc);
    let o = rail(&w, "freeze-research", &u.run, &[]);
    ensure!(
        o.status.code() == Some(0),
        "freeze-research failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lc = lifecycle_json(&u.run);
    let verdict = lc["records"]["research"]["claims"]
        .as_array()
        .and_then(|c| c.iter().find(|v| v["id"] == id.as_str()))
        .cloned()
        .unwrap_or(Value::Null);
    ensure!(
        verdict["status"] == "rejected" && verdict["reasons"].to_string().contains("bytes"),
        "the huge claim was not rejected by name: {verdict}"
    );
    let claimed = lc["records"]["research"]["claims"]
        .as_array()
        .is_some_and(|c| {
            c.iter()
                .any(|v| v["id"] == u.claim.as_str() && v["status"] == "accepted")
        });
    ensure!(claimed, "the honest claim beside it was not accepted");
    for f in ["lifecycle.json", "journal.jsonl"] {
        let size = std::fs::metadata(u.run.join(f)).unwrap().len();
        ensure!(
            size < 256 << 10,
            "the huge value was copied into {f} ({size} bytes)"
        );
    }
    verifies(&w, &u.run)
}

/// `rel` made a sparse file past the 256 MiB cap: the next rail refuses naming it and the
/// cap at once (it is never read); `case verify` exits `verify_code`.
fn giant(rel: &str, verify_code: i32) -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    ev(&run, "src/payments/service.py", 32, 39)?;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(run.join(rel))
        .unwrap();
    file.set_len(300 << 20).unwrap();
    let world = outside(&w, &run);
    let started = std::time::Instant::now();
    let o = rail(&w, "add-evidence", &run, &["--path", "docs/payments.md"]);
    refused(&o, "io", &[rel, "cap"])?;
    ensure!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the refusal took {:?}: the file was read",
        started.elapsed()
    );
    let (code, doc) = super::verify(&w, &run);
    ensure!(
        code == Some(verify_code),
        "`case verify` exits {code:?}, not {verify_code}: {doc}"
    );
    if rel != "journal.jsonl" {
        ensure!(journal(&run).len() == 2, "the refusal was not journaled");
    }
    ensure!(outside(&w, &run) == world, "the world changed");
    Ok(())
}
