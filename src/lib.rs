//! anvil-bench: a coding agent investigates a repository and proposes one grounded fix to
//! an API model; the engine owns everything that must be trustworthy.
//!
//! * [`air`] — the API model (AIR v1): loading, target keys, the canonical hash, and
//!   deterministic deficiency detection.
//! * [`skill`] — skill contracts held as data, their vocabularies and policy.
//! * [`case`] — case keys and immutable runs, `case.json` and its generated views
//!   (CASE.md, the per-case proposal schema), proposal parsing and binding, lifecycle.
//! * [`driver`] — the agent process runner (streaming, timeout, cancellation, process-group
//!   kill) and the child's allowlisted environment.
//! * [`reconcile`] — close: re-verification, re-validation, the eval delta, approval tiers,
//!   and application to the AIR with provenance.
//! * [`demo`] — scripted cases end to end on the bundled example.
//! * [`cli`] — the command-line interface; `main.rs` only calls [`cli::main`].
//! * [`canon`], [`fsio`], [`json_path`], [`repo`] — canonical JSON and hashes, atomic
//!   writes, path-naming deserialisation, repository revision.

pub mod air;
pub mod canon;
pub mod case;
pub mod cli;
pub mod driver;
pub mod demo;
pub mod exit;
pub mod fsio;
pub mod json_path;
pub mod reconcile;
pub mod repo;
pub mod skill;
