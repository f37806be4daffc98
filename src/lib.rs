//! anvil-bench: a coding agent investigates a repository and proposes one grounded fix to
//! an API model; the engine owns everything that must be trustworthy.
//!
//! The modules, from the ground up; each imports only modules listed before it
//! (`tests/layers.rs` holds the code to this order, and README's Layout to this list).
//!
//! * [`par`], [`memo`], [`canon`], [`fsio`], [`outpath`], [`limits`], [`json_path`] — the
//!   ordered worker pool, bounded memos for pure functions, canonical JSON and hashes,
//!   atomic writes and hostile-file reads, where an operator-given output may go, the named
//!   size caps (`ANVIL_MAX_<NAME>`), strict path-naming deserialisation.
//! * [`repo`] — the repository's revision and committed blobs, and the digest of an
//!   uncommitted tree.
//! * [`skill`] — skill contracts held as data: kinds, deficiency codes, policies,
//!   vocabularies and attestation rules.
//! * [`air`] — the API model (AIR v1): loading, target keys, the canonical hash,
//!   deterministic deficiency detection, and OpenAPI/Swagger import and export
//!   ([`air::openapi`]).
//! * [`case`] — case keys and immutable runs: [`case::RunHandle`] (a run opened once, the
//!   rails as its methods), `case.json` and its generated views, proposal parsing and
//!   binding, lifecycle, and attestation: whether cited lines state a claimed value.
//! * [`tools`] — the read-only investigation tool router: strict query batches over the
//!   inspect scopes and JSON table snapshots.
//! * [`reconcile`] — close: re-verification, re-validation, the eval delta, the gate
//!   (attested values, no conflict between verified excerpts), approval tiers, and
//!   application to the AIR with provenance.
//! * [`process`] — the process runner under every agent (streaming, timeout, cancellation,
//!   process-group kill).
//! * [`sandbox`] — execution backends (native, bubblewrap), the model-endpoint bridge, the
//!   rail relay, the attestation and the repository cleanliness check.
//! * [`driver`] — the `AgentDriver` seam: the scripted driver and the process drivers
//!   (Claude Code, Codex, any command), the child's allowlisted environment, the accounting
//!   read from each agent's own output, and the MCP wiring where every MCP name is defined.
//! * [`mcp`] — `mcp serve`: the case rails as MCP tools over stdio, relayed out of a sandbox.
//! * [`demo`] — scripted cases end to end on the bundled example.
//! * [`investigator`] — in-process, non-LLM investigators over the tool router and the
//!   rails: the heuristic investigation (one plan, in process or through [`replay`]), the
//!   AIR-only baseline and the over-claiming adversary.
//! * [`replay`] — `replay-model`: the Anthropic Messages API and the OpenAI Responses API on
//!   loopback, played by a script or the heuristic investigation, so the real `claude` and
//!   the real `codex` run without a model.
//! * [`battery`] — the scenario corpus and its labels, arms, trials, scoring, statistics,
//!   results, resume, partition and merge.
//! * [`report`] — views of battery results: report.md, a self-contained report.html with
//!   charts and per-trial drill-downs, JSON, JUnit, and `report diff` of two runs.
//! * [`cli`] — the command-line interface, and the one place exit codes are decided;
//!   `main.rs` only calls [`cli::main`].

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
pub mod memo;
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
