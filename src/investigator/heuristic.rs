//! The heuristic investigator in process: the run's own CASE.md read as an agent reads
//! it, the plan of [`super::plan`] played through `super::direct::Direct` — the tool
//! router and the rails, no process and no model.
//!
//! Invariant: it leaves the run finalized whenever the engine allows it — a refusal anywhere
//! becomes an honest decline that says why — and returns `Err` only when not even a decline
//! could be finalized.

use super::Conclusion;
use super::brief::Brief;
use super::direct::Direct;
use super::plan;
use crate::case::finalize::Status;
use crate::case::views::CASE_MD;
use crate::case::{CaseError, RunHandle};

/// Investigates the open run and finalizes it.
///
/// # Errors
///
/// A rail that fails for a reason other than refusing the move (a refusal is a decline,
/// not an error).
pub fn run(run: &RunHandle) -> Result<Conclusion, CaseError> {
    let mut hands = Direct::new(run);
    let path = run.dir().join(CASE_MD);
    let brief = match std::fs::read_to_string(&path) {
        Ok(text) => Brief::parse(&text).ok_or_else(|| "it is not a case brief".to_string()),
        Err(e) => Err(e.to_string()),
    };
    let brief = match brief {
        Ok(brief) => brief,
        Err(why) => {
            let reason = format!("the brief `{CASE_MD}` could not be read: {why}");
            return hands.decline(Status::InsufficientEvidence, &reason);
        }
    };
    let Ok(outcome) = plan::investigate(&brief, &mut hands);
    hands.conclude(outcome)
}
