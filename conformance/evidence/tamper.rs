//! R-EV-1, R-EV-8, R-EV-9, R-EV-11: hand-written and edited evidence.json: forged
//! excerpts, relabelled kinds and externals claiming to be verified are refused at freeze,
//! an exact hand-written file is accepted, and an edit after the freeze is detected.

use crate::support::rails;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::lines_of;
use crate::ensure;
use crate::support::{
    World, add_ev, bytes_of, claim, externals, failed, freeze, frozen_unit, lifecycle_json,
    local_artifact_id, out, read_json, refused_as, unit_proposal, write_json, write_proposal,
};

/// A genuine doc artifact relabelled `implementation` (0.9 instead of 0.6), with its id
/// re-derived so it is self-consistent, must not survive freeze-research: the kind is the
/// scope's, never the author's.
pub(super) fn relabelled_kind() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "docs/payments.md", Some((3, 4))).map_err(failed)?;
    ensure!(a.kind.as_str() == "doc", "test setup: not a doc");
    let mut doc = read_json(&out(&run, "evidence.json"));
    let art = &mut doc["artifacts"][0];
    art["kind"] = json!("implementation");
    art["id"] = json!(local_artifact_id(
        "implementation",
        a.revision.as_deref().unwrap_or_default(),
        "docs/payments.md",
        3,
        4,
        &a.content_hash,
    ));
    let forged_id = art["id"].as_str().unwrap().to_string();
    write_json(&out(&run, "evidence.json"), &doc);
    claim(&run, "field.unit", json!("s"), &[&forged_id])?;
    match rails::freeze_research(&run, None) {
        Err(_) => {
            ensure!(
                lifecycle_json(&run)["state"] == "open",
                "a refused freeze moved the run"
            );
            Ok(())
        }
        Ok(record) => {
            let v = record.values.iter().find(|v| v.predicate == "field.unit");
            Err(format!(
                "freeze-research accepted a doc excerpt relabelled `implementation` by hand; \
                 field.unit = \"s\" now has strength {:?} (a lone doc is 0.6)",
                v.map(|v| v.strength)
            )
            .into())
        }
    }
}

pub(super) fn external_claims_verified() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    externals(&run, 1)?;
    let mut doc = read_json(&out(&run, "evidence.json"));
    doc["artifacts"][0]["verification"] = json!({"status": "verified", "verifier": "me"});
    write_json(&out(&run, "evidence.json"), &doc);
    let e = refused_as(rails::freeze_research(&run, None), "forged_artifact")?;
    ensure!(
        e.to_string()
            .contains(doc["artifacts"][0]["id"].as_str().unwrap()),
        "the refusal does not name the artifact: {e}"
    );
    ensure!(
        lifecycle_json(&run)["state"] == "open",
        "a refused freeze moved the run"
    );
    Ok(())
}

/// Three forgeries of a genuine artifact's excerpt (text only; text and hash; text, hash
/// and a re-derived id) and one wholly invented artifact: each refused at freeze-research.
pub(super) fn forged_excerpt() -> Result<(), Failed> {
    let forged_text = "`capture_timeout` is given in milliseconds.\n";
    let forged_hash = anvil_bench::canon::bytes_hash(forged_text.as_bytes());
    type Forge = Box<dyn Fn(&mut Value, &str)>;
    let variants: Vec<(&str, Forge)> = vec![
        (
            "excerpt only",
            Box::new(move |a: &mut Value, _| a["excerpt"] = json!(forged_text)),
        ),
        (
            "excerpt and contentHash",
            Box::new({
                let h = forged_hash.clone();
                move |a: &mut Value, _| {
                    a["excerpt"] = json!(forged_text);
                    a["contentHash"] = json!(h);
                }
            }),
        ),
        (
            "excerpt, contentHash and a re-derived id",
            Box::new({
                let h = forged_hash.clone();
                move |a: &mut Value, rev: &str| {
                    a["excerpt"] = json!(forged_text);
                    a["contentHash"] = json!(h);
                    a["id"] = json!(local_artifact_id("doc", rev, "docs/payments.md", 3, 4, &h));
                }
            }),
        ),
    ];
    for (what, forge) in variants {
        let w = World::new();
        let run = w.open_unit()?.run_dir;
        let a = add_ev(&run, "docs/payments.md", Some((3, 4))).map_err(failed)?;
        let mut doc = read_json(&out(&run, "evidence.json"));
        forge(
            &mut doc["artifacts"][0],
            a.revision.as_deref().unwrap_or_default(),
        );
        write_json(&out(&run, "evidence.json"), &doc);
        let lc_before = bytes_of(&run.join("lifecycle.json"));
        match rails::freeze_research(&run, None) {
            Ok(_) => return Err(format!("forged excerpt ({what}) survived freeze-research").into()),
            Err(e) => ensure!(
                ["forged_artifact", "inconsistent_artifact", "source_changed"].contains(&e.kind()),
                "forged excerpt ({what}) refused for another reason: {} {e}",
                e.kind()
            ),
        }
        ensure!(
            bytes_of(&run.join("lifecycle.json")) == lc_before,
            "a refused freeze ({what}) changed lifecycle.json"
        );
    }
    // A wholly invented artifact: no rail call, consistent hash and id, forged text.
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let id = local_artifact_id("doc", "none", "docs/payments.md", 3, 4, &forged_hash);
    write_json(
        &out(&run, "evidence.json"),
        &json!({"format": "anvil-evidence", "formatVersion": 1, "artifacts": [{
            "id": id, "uri": "repo:docs/payments.md#L3-L4", "kind": "doc", "revision": "none",
            "path": "docs/payments.md", "startLine": 3, "endLine": 4,
            "contentHash": forged_hash, "excerpt": forged_text,
            "acquiredAt": "2026-01-01T00:00:00.000Z",
            "verification": {"status": "verified", "verifier": "anvil-bench/0.1.0"}
        }]}),
    );
    let e = refused_as(rails::freeze_research(&run, None), "source_changed")?;
    ensure!(
        e.to_string().contains(&id),
        "the refusal does not name the artifact: {e}"
    );
    Ok(())
}

pub(super) fn honest_hand_written() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let text: String = lines_of(&w.repo().join("docs/payments.md"))[2..4].concat();
    let hash = anvil_bench::canon::bytes_hash(text.as_bytes());
    let id = local_artifact_id("doc", "none", "docs/payments.md", 3, 4, &hash);
    write_json(
        &out(&run, "evidence.json"),
        &json!({"format": "anvil-evidence", "formatVersion": 1, "artifacts": [{
            "id": id, "uri": "repo:docs/payments.md#L3-L4", "kind": "doc", "revision": "none",
            "path": "docs/payments.md", "startLine": 3, "endLine": 4,
            "contentHash": hash, "excerpt": text,
            "acquiredAt": "2026-01-01T00:00:00.000Z",
            "verification": {"status": "verified", "verifier": "anvil-bench/0.1.0"}
        }]}),
    );
    freeze(&run)?;
    ensure!(
        lifecycle_json(&run)["state"] == "research_frozen",
        "an exact hand-written evidence.json did not freeze"
    );
    Ok(())
}

pub(super) fn frozen_evidence_edit() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let path = out(&u.run, "evidence.json");
    let mut doc = read_json(&path);
    doc["artifacts"][1]["excerpt"] = json!("def test_capture_timeout_is_milliseconds():\n");
    write_json(&path, &doc);
    let lc_before = bytes_of(&u.run.join("lifecycle.json"));
    for (rail, r) in [
        ("validate", rails::validate(&u.run, None, false).map(|_| ())),
        (
            "validate --dry-run",
            rails::validate(&u.run, None, true).map(|_| ()),
        ),
        (
            "finalize",
            crate::support::rails::finalize(
                &u.run,
                Some(anvil_bench::case::finalize::Status::InsufficientEvidence),
                None,
                None,
            )
            .map(|_| ()),
        ),
    ] {
        let e = refused_as(r, "tamper")?;
        ensure!(
            e.to_string().contains("output/evidence.json"),
            "{rail}: the tamper error does not name the file: {e}"
        );
    }
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc_before,
        "a tampered run moved on"
    );
    let shown = rails::show(&u.run).map_err(failed)?;
    ensure!(
        shown
            .tampered
            .is_some_and(|t| t.contains("output/evidence.json")),
        "show does not report the tamper"
    );
    Ok(())
}
