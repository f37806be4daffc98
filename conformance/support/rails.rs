//! The rails as a trial calls them: by run directory, each call opening its own
//! [`RunHandle`] — exactly what one `anvil-bench case …` process does — so a trial reads
//! as the protocol reads (`rails::validate(run, key, dry_run)`) while the engine's only
//! way in stays the handle.

use std::path::Path;

use anvil_bench::case::evidence::{EvidenceArtifact, EvidenceRequest};
use anvil_bench::case::finalize::{ResultDoc, Status};
use anvil_bench::case::handle::ShowReport;
use anvil_bench::case::lifecycle::Lifecycle;
use anvil_bench::case::rail::Broken;
use anvil_bench::case::research::{ClaimInput, ResearchRecord};
use anvil_bench::case::validate::ValidationRecord;
use anvil_bench::case::verify::VerifyReport;
use anvil_bench::case::{CaseError, Run, RunHandle};
use anvil_bench::tools::{ResultDoc as QueryResult, ToolError, ToolLimits};
use serde_json::Value;

pub use anvil_bench::case::frozen::load_frozen;
pub use anvil_bench::case::validate::Review;

pub fn add_evidence(
    run: &Path,
    req: &EvidenceRequest,
    key: Option<&str>,
) -> Result<EvidenceArtifact, CaseError> {
    RunHandle::open(run)?.add_evidence(req, key)
}

pub fn add_external_evidence(
    run: &Path,
    source: &str,
    uri: &str,
    excerpt: &str,
    key: Option<&str>,
) -> Result<EvidenceArtifact, CaseError> {
    RunHandle::open(run)?.add_external_evidence(source, uri, excerpt, key)
}

pub fn add_claim(
    run: &Path,
    input: ClaimInput,
    key: Option<&str>,
) -> Result<anvil_bench::case::claim::RawClaim, CaseError> {
    RunHandle::open(run)?.add_claim(input, key)
}

pub fn add_claim_json(
    run: &Path,
    body: &Value,
    key: Option<&str>,
) -> Result<anvil_bench::case::claim::RawClaim, CaseError> {
    RunHandle::open(run)?.add_claim_json(body, key)
}

pub fn freeze_research(run: &Path, key: Option<&str>) -> Result<ResearchRecord, CaseError> {
    RunHandle::open(run)?.freeze_research(key)
}

pub fn validate(
    run: &Path,
    key: Option<&str>,
    dry_run: bool,
) -> Result<ValidationRecord, CaseError> {
    RunHandle::open(run)?.validate(key, dry_run)
}

pub fn finalize(
    run: &Path,
    status: Option<Status>,
    reason: Option<&str>,
    key: Option<&str>,
) -> Result<ResultDoc, CaseError> {
    RunHandle::open(run)?.finalize(status, reason, key)
}

pub fn show(run: &Path) -> Result<ShowReport, CaseError> {
    RunHandle::open(run)?.show()
}

pub fn verify(
    run: &Path,
    air: Option<&Path>,
    repo: Option<&Path>,
) -> Result<VerifyReport, CaseError> {
    RunHandle::open(run)?.verify(air, repo)
}

pub fn tamper(run: &Path) -> Result<Vec<Broken>, CaseError> {
    RunHandle::open(run)?.tamper()
}

/// The run's documents, through the handle.
pub fn load_run(run: &Path) -> Result<Run, CaseError> {
    RunHandle::open(run).map(RunHandle::into_run)
}

/// The run's lifecycle as it is on disk, through the handle.
pub fn load_lifecycle(run: &Path) -> Result<Lifecycle, CaseError> {
    RunHandle::open(run)?.lifecycle()
}

pub fn close(
    run: &Path,
    req: &anvil_bench::reconcile::CloseRequest,
    key: Option<&str>,
) -> Result<anvil_bench::reconcile::CloseDoc, CaseError> {
    RunHandle::open(run)?.close(req, key)
}

/// A query batch through the router with the case's limits, as `case query` answers it
/// (unjournaled).
pub fn query(run: &Path, request: &Value) -> Result<QueryResult, ToolError> {
    anvil_bench::tools::query(&RunHandle::open(run)?, request)
}

pub fn query_with_limits(
    run: &Path,
    request: &Value,
    limits: &ToolLimits,
) -> Result<QueryResult, ToolError> {
    anvil_bench::tools::query_with_limits(&RunHandle::open(run)?, request, limits)
}

pub fn query_journaled(run: &Path, request: &Value) -> Result<QueryResult, ToolError> {
    anvil_bench::tools::query_journaled(&RunHandle::open(run)?, request)
}
