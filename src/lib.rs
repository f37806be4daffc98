//! anvil-bench: a coding agent investigates a repository and proposes one grounded fix to
//! an API model; the engine owns everything that must be trustworthy.
//!
//! * [`air`] — the API model (AIR v1): loading, target keys, the canonical hash,
//!   deterministic deficiency detection, and OpenAPI/Swagger import and export
//!   ([`air::openapi`]).
//! * [`skill`] — skill contracts held as data, their vocabularies and policy.
//! * [`case`] — case keys and immutable runs, `case.json` and its generated views
//!   (CASE.md, the per-case proposal schema), proposal parsing and binding, lifecycle, and
//!   attestation: whether cited lines state a claimed value (the engine's gate).
//! * [`process`] — the process runner under every agent (streaming, timeout, cancellation,
//!   process-group kill).
//! * [`driver`] — the child's allowlisted environment and the process drivers (Claude Code,
//!   Codex, any command) with the accounting read from each agent's own output.
//! * [`sandbox`] — execution backends (native, bubblewrap), the model-endpoint bridge, the
//!   rail relay, the attestation and the repository cleanliness check.
//! * [`reconcile`] — close: re-verification, re-validation, the eval delta, the gate
//!   (attested values, no conflict between verified excerpts), approval tiers, and
//!   application to the AIR with provenance.
//! * [`demo`] — scripted cases end to end on the bundled example.
//! * [`battery`] — the scenario corpus and its labels: strict formats, `scenarios check`,
//!   and the labels seal.
//! * [`report`] — views of battery results: report.md, a self-contained report.html with
//!   charts and per-trial drill-downs, JSON, `JUnit`, and `report diff` of two runs.
//! * [`investigator`] — in-process, non-LLM investigators over the tool router and the
//!   rails: the heuristic investigation (one plan, in process or through [`replay`]) and
//!   the AIR-only baseline.
//! * [`replay`] — `replay-model`: the Anthropic Messages API and the `OpenAI` Responses API on
//!   loopback, played by a script or the heuristic investigation, so the real `claude` and
//!   the real `codex` run without a model.
//! * [`mcp`] — `mcp serve`: the case rails as MCP tools over stdio, relayed out of a sandbox.
//! * [`tools`] — the read-only investigation tool router: strict query batches over the
//!   inspect scopes and JSON table snapshots.
//! * [`cli`] — the command-line interface; `main.rs` only calls [`cli::main`].
//! * [`canon`], [`fsio`], [`json_path`], [`repo`] — canonical JSON and hashes, atomic
//!   writes, path-naming deserialisation, repository revision.
//! * [`limits`], [`outpath`] — the named size caps on every input (`ANVIL_MAX_<NAME>`), and
//!   where an operator-given output may be written.

pub mod air;
pub mod battery;
pub mod canon;
pub mod case;
pub mod cli;
pub mod demo;
pub mod driver;
pub mod fsio;
pub mod investigator;
pub mod json_path;
pub mod limits;
pub mod mcp;
pub mod outpath;
pub mod par;
pub mod process;
pub mod reconcile;
pub mod replay;
pub mod repo;
pub mod report;
pub mod sandbox;
pub mod skill;
pub mod tools;
