//! The execution attestation: which containment guarantees a backend enforced for a run and
//! which it could not, plus every connection the model-endpoint bridge refused.
//!
//! Invariant: every [`Guarantee`] appears in exactly one of `enforced` and `unenforced`, so a
//! run's record never leaves a guarantee unaccounted for; a backend that cannot enforce one
//! says so here rather than by omission.

use serde::{Deserialize, Serialize};

/// One containment guarantee, with a stable id (its `snake_case` serde name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Guarantee {
    /// The agent cannot write the repository under investigation.
    RepositoryReadOnly,
    /// The agent cannot write the run root (case.json, CASE.md, the schema, lifecycle.json,
    /// journal.jsonl); only the engine's rails change the engine-owned files.
    RunRootReadOnly,
    /// The agent can write only the run's `workspace/` and `output/` (and a private `/tmp`
    /// that vanishes with the sandbox).
    CaseOnlyWrites,
    /// The evaluator's hidden paths (the project's `labels-private/`) are not reachable.
    LabelsUnreachable,
    /// The agent has a network namespace of its own: no route to the host or the internet.
    NetworkIsolated,
    /// The only way out is the bridge, which reaches the allowed model endpoints only.
    ModelEndpointOnly,
    /// The agent's environment is an allowlist, never the ambient environment.
    EnvironmentAllowlisted,
    /// Repository changes are detected before and after the run (git status, HEAD, or a
    /// content hash of a non-git tree) and recorded as a containment violation.
    RepositoryChangesDetected,
}

impl Guarantee {
    /// Every guarantee, in a stable order.
    pub const ALL: [Guarantee; 8] = [
        Guarantee::RepositoryReadOnly,
        Guarantee::RunRootReadOnly,
        Guarantee::CaseOnlyWrites,
        Guarantee::LabelsUnreachable,
        Guarantee::NetworkIsolated,
        Guarantee::ModelEndpointOnly,
        Guarantee::EnvironmentAllowlisted,
        Guarantee::RepositoryChangesDetected,
    ];

    /// The stable id, as written in execution.json.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Guarantee::RepositoryReadOnly => "repository_read_only",
            Guarantee::RunRootReadOnly => "run_root_read_only",
            Guarantee::CaseOnlyWrites => "case_only_writes",
            Guarantee::LabelsUnreachable => "labels_unreachable",
            Guarantee::NetworkIsolated => "network_isolated",
            Guarantee::ModelEndpointOnly => "model_endpoint_only",
            Guarantee::EnvironmentAllowlisted => "environment_allowlisted",
            Guarantee::RepositoryChangesDetected => "repository_changes_detected",
        }
    }
}

/// Which backend ran the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    Native,
    Bubblewrap,
}

/// What the bridge decided about one connection that reached it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Relayed to an allowed endpoint.
    Allowed,
    /// Refused by policy: the target is not an allowed endpoint.
    Refused,
    /// Allowed, but the endpoint could not be reached.
    Failed,
}

/// One connection the agent opened through the bridge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConnectionAttempt {
    /// RFC 3339 UTC, when the bridge decided.
    pub at: String,
    /// The in-sandbox address the agent connected to (`127.0.0.1:PORT`).
    pub via: String,
    /// What the agent asked for: the forward's fixed target, or the CONNECT target.
    pub target: String,
    pub decision: Decision,
    /// Why, for a refusal or a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The attestation recorded in a run's execution.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Attestation {
    pub backend: BackendKind,
    pub enforced: Vec<Guarantee>,
    pub unenforced: Vec<Guarantee>,
    /// How the agent reaches the rails, and anything else a reader needs to weigh the lists.
    pub notes: Vec<String>,
    /// Every connection the bridge refused (by policy) during the run.
    pub refused_connections: Vec<ConnectionAttempt>,
}

/// Guarantees only process-level isolation can give; native execution has none of them.
const SANDBOX_ONLY: [Guarantee; 6] = [
    Guarantee::RepositoryReadOnly,
    Guarantee::RunRootReadOnly,
    Guarantee::CaseOnlyWrites,
    Guarantee::LabelsUnreachable,
    Guarantee::NetworkIsolated,
    Guarantee::ModelEndpointOnly,
];

impl Attestation {
    /// What `backend` enforces, before any connection was made.
    #[must_use]
    pub fn for_backend(backend: BackendKind) -> Attestation {
        let (enforced, unenforced, notes) = match backend {
            BackendKind::Native => (
                Guarantee::ALL
                    .into_iter()
                    .filter(|g| !SANDBOX_ONLY.contains(g))
                    .collect(),
                SANDBOX_ONLY.to_vec(),
                vec![
                    "native execution: the agent runs as the engine's user with the host \
                     filesystem and network; the repository, the run root and the labels are \
                     protected only by instruction, and repository changes are detected \
                     after the fact"
                        .to_string(),
                ],
            ),
            BackendKind::Bubblewrap => (
                Guarantee::ALL.to_vec(),
                Vec::new(),
                vec![
                    "bubblewrap: rails called inside the sandbox are relayed over a Unix \
                     socket to the engine, which runs them in a second sandbox where only the \
                     run directory is writable; the agent's own sandbox keeps the run root \
                     read-only"
                        .to_string(),
                    "network: connection attempts that never reach the bridge fail inside the \
                     sandbox's own network namespace and cannot be logged"
                        .to_string(),
                ],
            ),
        };
        Attestation {
            backend,
            enforced,
            unenforced,
            notes,
            refused_connections: Vec::new(),
        }
    }

    /// Whether `guarantee` was enforced.
    #[must_use]
    pub fn enforces(&self, guarantee: Guarantee) -> bool {
        self.enforced.contains(&guarantee)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `id` is what the CLI prints ("not enforced: …"): the name execution.json records.
    #[test]
    fn a_guarantees_id_is_its_recorded_name() {
        for g in Guarantee::ALL {
            let recorded = serde_json::to_value(g).unwrap();
            assert_eq!(recorded.as_str(), Some(g.id()), "{g:?}");
        }
    }
}
