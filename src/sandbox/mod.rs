//! Execution backends and containment: where an agent process runs, what it can reach, and
//! the record of what was enforced.
//!
//! * [`Backend`] — `native` (refuses unless the caller acknowledged degraded containment) or
//!   `bubblewrap` (see [`bubblewrap`]: repository and run root read-only, only `workspace/`
//!   and `output/` writable, the labels and the rest of the project not mounted, the network
//!   unshared).
//! * [`bridge`] — the model-endpoint bridge: the sandboxed agent's only way out.
//! * [`relay`] — the rail relay: how rails called inside the sandbox reach the run through
//!   the engine.
//! * [`attest`] — the attestation of enforced and unenforced guarantees.
//! * [`git`] — the repository's state before and after a run, and the containment violation.
//! * [`init`] — what runs inside the sandbox first (`anvil-bench sandbox-init`).
//!
//! Invariant: degradation is never implicit. A backend that cannot be had is an error, never
//! a silent fall back to native execution, and every run that does execute carries an
//! attestation naming each guarantee its backend could not enforce.

pub mod attest;
pub mod bridge;
pub mod bubblewrap;
pub mod git;
pub mod init;
pub mod relay;

use std::path::PathBuf;

use serde::Serialize;

use crate::process::{self, CancelHandle, ExecutionRecord, LogLine, ProcessSpec, RunnerError};
pub use attest::{Attestation, BackendKind, ConnectionAttempt, Decision, Guarantee};
pub use bridge::Endpoint;
pub use bubblewrap::SandboxPlan;
pub use git::{ContainmentViolation, RepoSnapshot, SnapshotError};

/// The refusal native execution gives without consent (seed §10, verbatim).
pub const NATIVE_REFUSAL: &str = "Native execution cannot enforce repository read-only and \
case-only writes. Use a sandboxed backend or pass --allow-degraded-native to acknowledge the \
reduced containment.";

/// Where the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// On the host, as the engine's user. Starts only when `allow_degraded_native` is set.
    Native { allow_degraded_native: bool },
    /// In a bubblewrap sandbox built from the [`SandboxPlan`].
    Bubblewrap,
}

impl Backend {
    /// `--backend NAME [--allow-degraded-native]`. The flag never changes which backend
    /// runs: it only lets `native` start.
    ///
    /// # Errors
    ///
    /// `SandboxError::UnknownBackend` for a `name` other than `native` and `bubblewrap`.
    pub fn from_flags(name: &str, allow_degraded_native: bool) -> Result<Backend, SandboxError> {
        match name {
            "native" => Ok(Backend::Native {
                allow_degraded_native,
            }),
            "bubblewrap" => Ok(Backend::Bubblewrap),
            other => Err(SandboxError::UnknownBackend(other.to_string())),
        }
    }

    #[must_use]
    pub fn kind(&self) -> BackendKind {
        match self {
            Backend::Native { .. } => BackendKind::Native,
            Backend::Bubblewrap => BackendKind::Bubblewrap,
        }
    }

    /// Wraps `spec` for this backend. Native returns it unchanged (after the consent check);
    /// bubblewrap returns the `bwrap` invocation and starts its bridge.
    ///
    /// # Errors
    ///
    /// `SandboxError::NativeNotAcknowledged` for native without `allow_degraded_native`.
    /// Under bubblewrap: `SandboxError::BubblewrapMissing`; `SandboxError::Unusable` when a
    /// path of the plan (repository, run, its `workspace/` or `output/`, the working
    /// directory, the binary, an extra or rail-input path) cannot be resolved;
    /// `SandboxError::RepoInsideRun`; `SandboxError::Program` when the agent program is not
    /// found or not executable; `SandboxError::HiddenExposed` when a mount would reach a
    /// hidden path; `SandboxError::Bridge` when the bridge cannot be started.
    pub fn prepare(
        &self,
        spec: &ProcessSpec,
        plan: &SandboxPlan,
    ) -> Result<Prepared, SandboxError> {
        let attestation = Attestation::for_backend(self.kind());
        match self {
            Backend::Native {
                allow_degraded_native: false,
            } => Err(SandboxError::NativeNotAcknowledged),
            Backend::Native { .. } => Ok(Prepared {
                spec: spec.clone(),
                attestation,
                bridge: None,
            }),
            Backend::Bubblewrap => {
                let wrapped = bubblewrap::wrap(spec, plan)?;
                let mut attestation = attestation;
                if !wrapped.extra_ro.is_empty() {
                    let dirs: Vec<String> = wrapped
                        .extra_ro
                        .iter()
                        .map(|d| format!("`{}`", d.display()))
                        .collect();
                    attestation
                        .notes
                        .push(format!("also mounted read-only: {}", dirs.join(", ")));
                }
                Ok(Prepared {
                    spec: wrapped.spec,
                    attestation,
                    bridge: Some(wrapped.bridge),
                })
            }
        }
    }
}

/// A spec ready to hand to the runner, and the machinery that must outlive it.
pub struct Prepared {
    /// What to run: the agent itself (native) or `bwrap` around it.
    pub spec: ProcessSpec,
    attestation: Attestation,
    bridge: Option<bridge::Bridge>,
}

impl Prepared {
    /// The attestation before any connection was made.
    #[must_use]
    pub fn attestation(&self) -> &Attestation {
        &self.attestation
    }

    /// Stops the bridge (call once the process ended) and returns the final attestation,
    /// with its refused connections, and every connection that reached the bridge.
    #[must_use]
    pub fn finish(mut self) -> (Attestation, Vec<ConnectionAttempt>) {
        let log = self
            .bridge
            .as_mut()
            .map(bridge::Bridge::stop)
            .unwrap_or_default();
        self.attestation.refused_connections = log
            .iter()
            .filter(|c| c.decision == Decision::Refused)
            .cloned()
            .collect();
        (self.attestation, log)
    }
}

/// One contained run: what the process did and what containment recorded about it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainedRun {
    pub record: ExecutionRecord,
    pub attestation: Attestation,
    /// Every connection that reached the bridge (empty for native).
    pub connections: Vec<ConnectionAttempt>,
    pub repository_before: RepoSnapshot,
    pub repository_after: RepoSnapshot,
    /// Set when the repository changed: the caller records it (the CLI exits with its
    /// containment code).
    pub violation: Option<ContainmentViolation>,
}

/// Records the repository, runs `spec` under `backend`, stops the bridge, and records the
/// repository again. Refusals (native without consent, bwrap missing, a plan that would
/// expose a hidden path) happen before anything is spawned.
///
/// # Errors
///
/// Any error of [`Backend::prepare`], before anything is spawned; `SandboxError::Snapshot`
/// when the repository cannot be recorded before or after the run; `SandboxError::Runner`
/// when the runner fails (see [`process::run`]). The process's own failure, timeout or
/// cancellation is the record's outcome, not an error.
pub async fn run_contained(
    backend: &Backend,
    spec: &ProcessSpec,
    plan: &SandboxPlan,
    cancel: &CancelHandle,
    on_line: impl FnMut(&LogLine) + Send,
) -> Result<ContainedRun, SandboxError> {
    let prepared = backend.prepare(spec, plan)?;
    let exclude = vec![plan.run_dir.clone()];
    let before = RepoSnapshot::capture(&plan.repo, &exclude)?;
    let record = process::run(&prepared.spec, cancel, on_line).await;
    let (attestation, connections) = prepared.finish();
    let record = record.map_err(SandboxError::Runner)?;
    let after = RepoSnapshot::capture(&plan.repo, &exclude)?;
    let violation = after.violation_since(&before, &plan.repo);
    Ok(ContainedRun {
        record,
        attestation,
        connections,
        repository_before: before,
        repository_after: after,
        violation,
    })
}

/// [`run_contained`] on a current-thread runtime of its own. Not for use inside a runtime.
///
/// # Errors
///
/// `SandboxError::Runner` with `RunnerError::Runtime` when the runtime cannot be built, or
/// any error of [`run_contained`].
pub fn run_contained_blocking(
    backend: &Backend,
    spec: &ProcessSpec,
    plan: &SandboxPlan,
    cancel: &CancelHandle,
    on_line: impl FnMut(&LogLine) + Send,
) -> Result<ContainedRun, SandboxError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| SandboxError::Runner(RunnerError::Runtime { source }))?;
    runtime.block_on(run_contained(backend, spec, plan, cancel, on_line))
}

/// Why a contained run could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("{}", NATIVE_REFUSAL)]
    NativeNotAcknowledged,
    #[error(
        "`bwrap` (bubblewrap) not found on PATH; install it with `{}` (the run does not fall back to native execution)",
        bubblewrap::INSTALL_HINT
    )]
    BubblewrapMissing,
    #[error("unknown backend `{0}`; known backends: native, bubblewrap")]
    UnknownBackend(String),
    #[error("cannot sandbox the run: {what} `{}` is not usable: {source}", path.display())]
    Unusable {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "cannot sandbox the run: the repository `{}` lies inside the run directory `{}`",
        repo.display(),
        run.display()
    )]
    RepoInsideRun { repo: PathBuf, run: PathBuf },
    #[error(
        "the hidden path `{}` would be reachable in the sandbox through the mount of `{}`; move it out of that directory or mount less",
        hidden.display(),
        via.display()
    )]
    HiddenExposed { hidden: PathBuf, via: PathBuf },
    /// The agent program cannot be found or executed.
    #[error(transparent)]
    Program(RunnerError),
    #[error("cannot start the model-endpoint bridge in `{}`: {source}", dir.display())]
    Bridge {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The runner could not carry out the run.
    #[error(transparent)]
    Runner(RunnerError),
}

impl SandboxError {
    /// A stable, machine-readable name for this kind of failure.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            SandboxError::NativeNotAcknowledged => "degraded_native_not_acknowledged",
            SandboxError::BubblewrapMissing => "bubblewrap_missing",
            SandboxError::UnknownBackend(_) => "unknown_backend",
            SandboxError::Unusable { .. } | SandboxError::RepoInsideRun { .. } => {
                "bad_sandbox_plan"
            }
            SandboxError::HiddenExposed { .. } => "hidden_path_exposed",
            SandboxError::Program(e) | SandboxError::Runner(e) => e.kind(),
            SandboxError::Bridge { .. } => "bridge_failed",
            SandboxError::Snapshot(_) => "repository_snapshot_failed",
        }
    }
}
