//! In-process, non-LLM investigators: policies over the tool router and the rails that
//! take a case from open to finalized with no agent process and no model.
//!
//! * [`heuristic`] — the heuristic investigation ([`plan`], written once over the moves of
//!   [`plan::Hands`]) made in process by `direct`; `crate::replay::heuristic` makes the
//!   same plan through a real client's tool calls.
//! * [`baseline`] — no repository access: proposes only what the AIR alone supports.
//! * [`overclaim`] — the adversary that cites any region naming the target and claims a
//!   wrong value, to measure the engine's gate.
//! * [`brief`] — reading CASE.md as an agent does; [`rules`] — the inference rules.
//!
//! Invariant: an investigator reaches the engine only through the public rails and the
//! tool router — never by writing a run's engine-owned files — so what it achieves is
//! exactly what an agent could.

pub mod baseline;
pub mod brief;
pub(crate) mod direct;
pub mod heuristic;
pub mod overclaim;
pub mod plan;
pub mod rules;
#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::case::finalize::Status;

/// How an in-process investigator left a run: finalized with `status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Conclusion {
    pub status: Status,
    /// Why, for every status but `proposal_generated`.
    pub reason: Option<String>,
    /// Actions taken (tool requests and rail calls): the "turns" of a non-LLM investigator.
    pub actions: u32,
}
