//! R-PARSE-2: a kind the skill does not admit is refused at the rail, and grounds nothing
//! when written into evidence.json by hand.

use crate::support::rails;
use libtest_mimic::Failed;
use serde_json::json;

use crate::ensure;
use crate::support::{
    EMAIL_TARGET, World, ev, external_artifact_id, failed, out, refused_as, tree, write_json,
};

pub(super) fn inadmissible_at_rail() -> Result<(), Failed> {
    let w = World::new();
    let run = anvil_bench::case::open(&w.request("classify-sensitivity", EMAIL_TARGET))
        .map_err(failed)?
        .run_dir;
    ev(&run, "src/payments/receipts.py", 13, 15)?;
    let before = tree(&run.join("output"));
    let e = refused_as(
        rails::add_external_evidence(
            &run,
            "crm-wiki",
            "https://wiki.example/customer-email",
            "customer_email is personal data\n",
            None,
        ),
        "inadmissible_kind",
    )?;
    ensure!(
        e.to_string().contains("external"),
        "the refusal does not name the kind: {e}"
    );
    ensure!(tree(&run.join("output")) == before, "output/ changed");
    Ok(())
}

/// classify-sensitivity admits no external evidence: an external artifact written into
/// evidence.json by hand must not ground a claim (refused at freeze, or its claim rejected
/// naming the inadmissible kind).
pub(super) fn inadmissible_hand_written() -> Result<(), Failed> {
    let w = World::new();
    let run = anvil_bench::case::open(&w.request("classify-sensitivity", EMAIL_TARGET))
        .map_err(failed)?
        .run_dir;
    let excerpt = "customer_email is personal data\n";
    let hash = anvil_bench::canon::bytes_hash(excerpt.as_bytes());
    let uri = "https://wiki.example/customer-email";
    let id = external_artifact_id("crm-wiki", uri, &hash);
    write_json(
        &out(&run, "evidence.json"),
        &json!({"format": "anvil-evidence", "formatVersion": 1, "artifacts": [{
            "id": id, "uri": uri, "kind": "external", "source": "crm-wiki",
            "contentHash": hash, "excerpt": excerpt,
            "acquiredAt": "2026-01-01T00:00:00.000Z",
            "verification": {"status": "unverified", "reason": "caller supplied"}
        }]}),
    );
    let value = json!("pii");
    let ids = vec![id.clone()];
    let cid = anvil_bench::case::research::claim_id("field.sensitivity", &value, &ids);
    write_json(
        &out(&run, "claims.json"),
        &json!({"format": "anvil-claims", "formatVersion": 1, "claims": [{
            "id": cid, "predicate": "field.sensitivity", "value": value,
            "artifactIds": ids, "confidence": 0.9
        }]}),
    );
    match rails::freeze_research(&run, None) {
        Err(e) => {
            ensure!(
                e.kind() == "inadmissible_kind" || e.to_string().contains("inadmissible"),
                "refused for another reason: {e}"
            );
        }
        Ok(record) => {
            let v = record.claims.iter().find(|c| c.id == cid);
            ensure!(
                v.is_some_and(
                    |v| v.status == anvil_bench::case::research::ClaimStatus::Rejected
                        && v.reasons.iter().any(|r| r.contains("inadmissible"))
                ),
                "a claim resting on inadmissible external evidence was not rejected: {v:?}"
            );
            ensure!(
                record.values.is_empty(),
                "inadmissible evidence supports a value: {:?}",
                record.values
            );
        }
    }
    Ok(())
}
