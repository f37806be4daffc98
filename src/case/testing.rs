//! Runs of the bundled payments example for the unit tests.

use std::path::Path;

use super::claim::RawClaim;
use super::evidence::{EvidenceArtifact, EvidenceRequest};
use super::research::ClaimInput;
use super::{OpenRequest, RunHandle, open};

/// An annotate-unit run on the payments example's `capture_timeout`, its cases dir in
/// `tmp`, with these `GLOB=KIND` scopes instead of the default ones when any are given.
pub(crate) fn payments_run(tmp: &Path, scopes: &[&str]) -> RunHandle {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/payments");
    let mut req = OpenRequest::new(
        example.join("air.json"),
        example.join("repo"),
        "annotate-unit",
        "op.create_payment.input.body.capture_timeout",
        tmp.join("cases"),
        "test",
    );
    req.scopes = scopes.iter().map(ToString::to_string).collect();
    let opened = open(&req).unwrap();
    RunHandle::open(&opened.run_dir).unwrap()
}

/// Cites lines `start..=end` of the repository's `path` through the add-evidence rail.
pub(crate) fn cite(run: &RunHandle, path: &str, start: u32, end: u32) -> EvidenceArtifact {
    let req = EvidenceRequest {
        path: path.into(),
        start_line: Some(start),
        end_line: Some(end),
    };
    run.add_evidence(&req, None).unwrap()
}

/// Claims `field.unit` = `value` on `artifact_ids` through the add-claim rail.
pub(crate) fn claim_unit(run: &RunHandle, value: &str, artifact_ids: &[&str]) -> RawClaim {
    let input = ClaimInput {
        predicate: "field.unit".into(),
        value: serde_json::json!(value),
        artifact_ids: artifact_ids.iter().map(ToString::to_string).collect(),
        confidence: 0.9,
    };
    run.add_claim(input, None).unwrap()
}
