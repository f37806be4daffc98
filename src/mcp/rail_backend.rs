//! The rail backend: how an MCP rail call reaches the rails — in process, or through the
//! sandbox's rail relay.
//!
//! Invariant: the MCP server never writes the run itself where it could not as `anvil-bench
//! case …`. Inside a bubblewrap sandbox (`ANVIL_BENCH_RAIL_SOCKET` set) the run root is
//! read-only, so every rail call is relayed to the engine exactly as the CLI rail would be,
//! and its refusal comes back with the same kind.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::args::RailCall;
use crate::case::evidence::EvidenceRequest;
use crate::case::finalize::Status;
use crate::case::research::ClaimInput;
use crate::case::{CaseError, RunHandle};
use crate::sandbox::relay::{RAIL_SOCKET_ENV, call};

/// A refused tool call: the stable kind first, then the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: String,
    pub message: String,
}

impl From<CaseError> for Refusal {
    fn from(e: CaseError) -> Refusal {
        Refusal {
            kind: e.kind().to_string(),
            message: e.to_string(),
        }
    }
}

/// Where rail calls go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RailBackend {
    /// This process runs the rails on the run directory.
    Direct,
    /// Inside a sandbox: relay `anvil-bench case …` to the engine over this socket.
    Relay { socket: PathBuf, cwd: PathBuf },
}

impl RailBackend {
    /// The relay when this process runs inside a sandbox with one, else direct.
    #[must_use]
    pub fn from_env() -> RailBackend {
        match std::env::var_os(RAIL_SOCKET_ENV) {
            Some(socket) if !socket.is_empty() => RailBackend::Relay {
                socket: PathBuf::from(socket),
                cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            },
            _ => RailBackend::Direct,
        }
    }

    /// Runs one rail call on the run at `run` and returns its result as JSON.
    ///
    /// # Errors
    ///
    /// A [`Refusal`] carrying the stable kind. Direct: the rail refuses (its `CaseError::kind()`: wrong state, stale run, tamper, a refused artifact
    /// or claim…); a finalize status that is not one is `unknown_status`; `internal` if the
    /// result does not render as JSON. Relayed: `rejected_document` for a line range given
    /// by one end only, `io` when a file for the relay cannot be written under
    /// `workspace/.mcp/`, `relay_unreachable` when the socket cannot be reached, the relayed
    /// CLI's own error kind, or `relay_failed` when the relayed rail answers no JSON or
    /// fails without an error document (a failing validation's record is a result).
    pub fn call(&self, run: &RunHandle, rail: &RailCall) -> Result<Value, Refusal> {
        match self {
            RailBackend::Direct => direct(run, rail),
            RailBackend::Relay { socket, cwd } => relay(socket, cwd, run, rail),
        }
    }
}

fn to_json<T: Serialize>(value: Result<T, CaseError>) -> Result<Value, Refusal> {
    let value = value?;
    serde_json::to_value(value).map_err(|e| Refusal {
        kind: "internal".into(),
        message: format!("cannot render the rail's result: {e}"),
    })
}

fn parse_status(raw: Option<&str>) -> Result<Option<Status>, CaseError> {
    match raw {
        None => Ok(None),
        Some(s) => Status::parse(s).map(Some).ok_or_else(|| CaseError::Rail {
            rail: "finalize",
            kind: "unknown_status",
            reason: format!(
                "`{s}` is not a status; use one of {}",
                Status::ALL.map(Status::as_str).join(", ")
            ),
        }),
    }
}

fn direct(run: &RunHandle, rail: &RailCall) -> Result<Value, Refusal> {
    match rail {
        RailCall::AddEvidence(a) => {
            let req = EvidenceRequest {
                path: a.path.clone(),
                start_line: a.start_line,
                end_line: a.end_line,
            };
            to_json(run.add_evidence(&req, Some(&a.idempotency_key)))
        }
        RailCall::AddExternalEvidence(a) => to_json(run.add_external_evidence(
            &a.source,
            &a.uri,
            &a.excerpt,
            Some(&a.idempotency_key),
        )),
        RailCall::AddClaim(a) => {
            let input = ClaimInput {
                predicate: a.predicate.clone(),
                value: a.value.clone(),
                artifact_ids: a.artifact_ids.clone(),
                confidence: a.confidence.unwrap_or(1.0),
            };
            to_json(run.add_claim(input, Some(&a.idempotency_key)))
        }
        RailCall::FreezeResearch(a) => to_json(run.freeze_research(Some(&a.idempotency_key))),
        RailCall::Validate(a) => {
            to_json(run.validate(Some(&a.idempotency_key), a.dry_run.unwrap_or(false)))
        }
        RailCall::Finalize(a) => {
            let status = parse_status(a.status.as_deref())?;
            to_json(run.finalize(status, a.reason.as_deref(), Some(&a.idempotency_key)))
        }
        RailCall::Show(_) => to_json(run.show()),
    }
}

/// The `anvil-bench case …` arguments that make the CLI do what `rail` asks, on the run
/// named `run` on that command line.
fn cli_args(run: &Path, rail: &RailCall) -> Result<Vec<String>, Refusal> {
    let run_arg = run.display().to_string();
    let mut args: Vec<String> = vec!["case".into()];
    let mut push = |xs: &[&str]| args.extend(xs.iter().map(ToString::to_string));
    match rail {
        RailCall::AddEvidence(a) => {
            push(&["add-evidence", &run_arg, "--path", &a.path]);
            if let (Some(s), Some(e)) = (a.start_line, a.end_line) {
                push(&["--start-line", &s.to_string(), "--end-line", &e.to_string()]);
            } else if a.start_line.is_some() || a.end_line.is_some() {
                return Err(Refusal {
                    kind: "rejected_document".into(),
                    message: "add_evidence: give startLine and endLine together".into(),
                });
            }
            push(&["--idempotency-key", &a.idempotency_key]);
        }
        RailCall::AddExternalEvidence(a) => {
            let workspace = run.join(crate::case::run::WORKSPACE_DIR);
            let file = workspace_file(&workspace, "excerpt", "txt", a.excerpt.as_bytes())?;
            push(&["add-external-evidence", &run_arg, "--source", &a.source]);
            push(&[
                "--uri",
                &a.uri,
                "--excerpt-file",
                &file.display().to_string(),
            ]);
            push(&["--idempotency-key", &a.idempotency_key]);
        }
        RailCall::AddClaim(a) => {
            let value = serde_json::to_string(&a.value).unwrap_or_default();
            push(&["add-claim", &run_arg, "--predicate", &a.predicate]);
            push(&["--value", &value]);
            for id in &a.artifact_ids {
                push(&["--artifact", id]);
            }
            if let Some(c) = a.confidence {
                push(&["--confidence", &c.to_string()]);
            }
            push(&["--idempotency-key", &a.idempotency_key]);
        }
        RailCall::FreezeResearch(a) => {
            push(&["freeze-research", &run_arg]);
            push(&["--idempotency-key", &a.idempotency_key]);
        }
        RailCall::Validate(a) => {
            push(&["validate", &run_arg]);
            if a.dry_run == Some(true) {
                push(&["--dry-run"]);
            }
            push(&["--idempotency-key", &a.idempotency_key]);
        }
        RailCall::Finalize(a) => {
            push(&["finalize", &run_arg]);
            if let Some(s) = &a.status {
                push(&["--status", s]);
            }
            if let Some(r) = &a.reason {
                push(&["--reason", r]);
            }
            push(&["--idempotency-key", &a.idempotency_key]);
        }
        RailCall::Show(_) => push(&["show", &run_arg]),
    }
    args.push("--json".into());
    Ok(args)
}

/// A file handed to a relayed command (an excerpt, a query batch) goes in the run's
/// `workspace/.mcp/`: the part of the run the agent's sandbox may write and the rail
/// sandbox can read.
pub(crate) fn workspace_file(
    workspace: &Path,
    prefix: &str,
    ext: &str,
    bytes: &[u8],
) -> Result<PathBuf, Refusal> {
    let dir = workspace.join(".mcp");
    let hash = crate::canon::bytes_hash(bytes);
    let tail: String = hash
        .trim_start_matches("sha256:")
        .chars()
        .take(24)
        .collect();
    let path = dir.join(format!("{prefix}-{tail}.{ext}"));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, bytes))
        .map_err(|e| Refusal {
            kind: "io".into(),
            message: format!("cannot write `{}`: {e}", path.display()),
        })?;
    Ok(path)
}

fn relay(socket: &Path, cwd: &Path, run: &RunHandle, rail: &RailCall) -> Result<Value, Refusal> {
    relay_json(socket, cwd, &cli_args(run.dir(), rail)?)
}

/// Relays `anvil-bench <args>` (ending in `--json`) and reads its JSON answer back: the
/// CLI's `{"error": {"kind", …}}` becomes a refusal of that kind.
pub(crate) fn relay_json(socket: &Path, cwd: &Path, args: &[String]) -> Result<Value, Refusal> {
    let reply = call(socket, args, cwd).map_err(|e| Refusal {
        kind: "relay_unreachable".into(),
        message: format!(
            "cannot reach the engine's rail relay at `{}`: {e}",
            socket.display()
        ),
    })?;
    let doc: Option<Value> = serde_json::from_str(reply.stdout.trim()).ok();
    if let Some(error) = doc.as_ref().and_then(|d| d.get("error")) {
        return Err(Refusal {
            kind: error["kind"].as_str().unwrap_or("refused").to_string(),
            message: error["message"].as_str().unwrap_or_default().to_string(),
        });
    }
    match doc {
        // A failing validation is a result, not a refusal: the CLI exits 1 with the record.
        Some(value) if reply.outcome.succeeded() || value.get("verdict").is_some() => Ok(value),
        _ => Err(Refusal {
            kind: "relay_failed".into(),
            message: format!(
                "the relayed rail {}: {}",
                reply.outcome,
                reply.stderr.trim()
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::args::{AddClaimArgs, FinalizeArgs};
    use serde_json::json;

    #[test]
    fn relayed_calls_are_the_cli_rails_with_json_output() {
        let run = Path::new("/runs/r1");
        let claim = RailCall::AddClaim(AddClaimArgs {
            predicate: "unit".into(),
            value: json!("s"),
            artifact_ids: vec!["ev-1".into(), "ev-2".into()],
            confidence: Some(0.9),
            idempotency_key: "k1".into(),
        });
        assert_eq!(
            cli_args(run, &claim).unwrap(),
            [
                "case",
                "add-claim",
                "/runs/r1",
                "--predicate",
                "unit",
                "--value",
                "\"s\"",
                "--artifact",
                "ev-1",
                "--artifact",
                "ev-2",
                "--confidence",
                "0.9",
                "--idempotency-key",
                "k1",
                "--json"
            ]
        );
        let fin = RailCall::Finalize(FinalizeArgs {
            status: None,
            reason: None,
            idempotency_key: "k2".into(),
        });
        assert_eq!(
            cli_args(run, &fin).unwrap(),
            [
                "case",
                "finalize",
                "/runs/r1",
                "--idempotency-key",
                "k2",
                "--json"
            ]
        );
    }

    #[test]
    fn every_relayed_rail_is_one_the_relay_admits() {
        let run = Path::new("/runs/r1");
        for (name, args) in [
            ("add_evidence", json!({"path": "a", "idempotencyKey": "k"})),
            (
                "add_claim",
                json!({"predicate": "p", "value": 1, "artifactIds": ["a"], "idempotencyKey": "k"}),
            ),
            ("freeze_research", json!({"idempotencyKey": "k"})),
            ("validate", json!({"idempotencyKey": "k"})),
            ("finalize", json!({"idempotencyKey": "k"})),
            ("show", json!({})),
        ] {
            let call = RailCall::parse(name, args).unwrap().unwrap();
            let argv = cli_args(run, &call).unwrap();
            assert!(
                crate::sandbox::relay::RELAYED_RAILS.contains(&argv[1].as_str()),
                "{name}"
            );
        }
    }
}
