//! `case investigate`: run one agent on one run, contained and accounted for.
//!
//! Invariant: the agent gets the run directory as its working directory, CASE.md as its
//! brief, an allowlisted environment, and the backend's containment; afterwards the engine
//! records what happened in `execution.json` (log, timings, usage, attestation, repository
//! before/after) whatever the agent's own result says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::env::{BASE_ALLOW, allowlisted_env, home_overrides};
use super::process_agent::{AgentCommand, ExecutionPolicy, ModelApi, ProcessAgent};
use super::usage::Usage;
use crate::case::lifecycle::State;
use crate::case::{CaseError, RunHandle};
use crate::process::{CancelHandle, ExecutionRecord, LogLine, Outcome, ProcessSpec};
use crate::sandbox::attest::Guarantee;
use crate::sandbox::bridge::EndpointError;
use crate::sandbox::{
    Attestation, Backend, ConnectionAttempt, ContainedRun, ContainmentViolation, Endpoint,
    RepoSnapshot, SandboxError, SandboxPlan, run_contained_blocking,
};

pub const EXECUTION_JSON: &str = "execution.json";
pub const EXECUTION_LOG: &str = "execution.log.jsonl";
/// The in-sandbox port of the CONNECT proxy for a real (https) model endpoint.
pub const PROXY_PORT: u16 = 18443;

/// `execution.json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionDoc {
    pub format: &'static str,
    pub format_version: u32,
    pub driver: String,
    pub backend: String,
    pub record: ExecutionRecord,
    pub usage: Usage,
    /// What the agent said, called and got back, where its output format is known.
    pub transcript: Vec<super::transcript::Event>,
    pub attestation: Attestation,
    pub connections: Vec<ConnectionAttempt>,
    pub repository_before: RepoSnapshot,
    pub repository_after: RepoSnapshot,
    pub violation: Option<ContainmentViolation>,
}

/// What `case investigate` reports. Its exit code is the CLI's to decide, from `outcome`
/// and `violation` (`cli::exit`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvestigateReport {
    pub format: &'static str,
    pub format_version: u32,
    pub run: String,
    pub driver: String,
    pub backend: String,
    pub outcome: Outcome,
    pub failure: Option<String>,
    pub state: State,
    pub status: Option<Value>,
    pub usage: Usage,
    /// The agent's process from spawn to exit, its sandbox's start included (`None` for an
    /// in-process driver: no process ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_ms: Option<u64>,
    /// `None` for an in-process (scripted) driver: no process ran, nothing was contained.
    pub attestation: Option<Attestation>,
    pub violation: Option<ContainmentViolation>,
}

/// Progress while the agent runs.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub line: &'a LogLine,
    pub usage: &'a Usage,
}

#[derive(Debug, thiserror::Error)]
pub enum InvestigateError {
    #[error(transparent)]
    Case(#[from] CaseError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// An investigation starts from an open run.
    #[error("cannot investigate: the run is {0}; an investigation starts from an open run")]
    NotOpen(State),
    #[error("cannot investigate: the run path is not UTF-8")]
    RunPathNotUtf8,
    /// The model endpoint cannot be reached from inside the sandbox.
    #[error("cannot investigate: {0}")]
    Endpoint(#[from] EndpointError),
}

impl InvestigateError {
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            InvestigateError::Case(e) => e.kind(),
            InvestigateError::Sandbox(e) => e.kind(),
            InvestigateError::NotOpen(_)
            | InvestigateError::RunPathNotUtf8
            | InvestigateError::Endpoint(_) => "investigate_refused",
        }
    }
}

/// The model endpoint the agent may reach from inside a sandbox, and the variables that
/// point it there: a loopback `*_BASE_URL` is forwarded on its own port; otherwise the
/// vendor's API host goes through the allowlisting CONNECT proxy.
fn model_endpoint(
    api: ModelApi,
    env: &BTreeMap<String, String>,
) -> Result<(Endpoint, BTreeMap<String, String>), InvestigateError> {
    let (var, default) = api.base_url();
    let url = env.get(var).cloned().unwrap_or_else(|| default.to_string());
    let endpoint = Endpoint::for_base_url(&url, PROXY_PORT)?;
    let mut set = BTreeMap::new();
    if let Endpoint::ConnectProxy { listen_port, .. } = &endpoint {
        let proxy = format!("http://127.0.0.1:{listen_port}");
        set.insert("HTTPS_PROXY".to_string(), proxy.clone());
        set.insert("https_proxy".to_string(), proxy);
    }
    Ok((endpoint, set))
}

/// Writes the files the agent's command needs (`name` relative to the run directory).
fn write_files(run: &RunHandle, files: &[(PathBuf, String)]) -> Result<(), CaseError> {
    for (name, text) in files {
        let path = run.dir().join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(CaseError::io("create", dir))?;
        }
        crate::fsio::write_atomic(&path, text.as_bytes()).map_err(CaseError::io("write", path))?;
    }
    Ok(())
}

/// The agent's `PATH`: the engine's own directory first, then the ambient `PATH`.
fn agent_path(policy: &ExecutionPolicy) -> String {
    let engine_dir = policy
        .engine
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let ambient_path = policy
        .ambient
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    format!("{}:{ambient_path}", engine_dir.display())
}

/// When nothing was named hidden, no label was kept out: never attest that one was.
fn unattest_labels(att: &mut Attestation) {
    if att.enforced.contains(&Guarantee::LabelsUnreachable) {
        att.enforced.retain(|g| *g != Guarantee::LabelsUnreachable);
        att.unenforced.push(Guarantee::LabelsUnreachable);
        att.notes.push(
            "labels_unreachable: no path was named hidden (--hide), so nothing was kept out".into(),
        );
    }
}

/// Readies the run for the agent's `command`: creates the agent's home in the workspace and
/// writes the files the command needs. Returns the agent's environment: the allowlisted
/// ambient variables, with its home, its `PATH` and the command's own variables set.
fn prepare_agent(
    handle: &RunHandle,
    command: &AgentCommand,
    policy: &ExecutionPolicy,
) -> Result<BTreeMap<String, String>, InvestigateError> {
    let home = handle.dir().join("workspace").join(".home");
    std::fs::create_dir_all(&home).map_err(CaseError::io("create", &home))?;
    write_files(handle, &command.files)?;
    let mut set = home_overrides(&home).ok_or(InvestigateError::RunPathNotUtf8)?;
    set.insert("PATH".into(), agent_path(policy));
    set.extend(command.set.clone());
    let mut allow: Vec<&str> = BASE_ALLOW.to_vec();
    allow.extend(command.allow.iter().map(String::as_str));
    Ok(allowlisted_env(policy.ambient.clone(), &allow, set))
}

/// Writes `execution.json` into `run_dir`: what the contained run recorded, with the
/// agent's usage and transcript.
fn write_execution(
    run_dir: &Path,
    driver: String,
    backend: String,
    contained: &ContainedRun,
    usage: &Usage,
    transcript: Vec<super::transcript::Event>,
) -> Result<(), CaseError> {
    let doc = ExecutionDoc {
        format: "anvil-execution",
        format_version: 1,
        driver,
        backend,
        record: contained.record.clone(),
        usage: usage.clone(),
        transcript,
        attestation: contained.attestation.clone(),
        connections: contained.connections.clone(),
        repository_before: contained.repository_before.clone(),
        repository_after: contained.repository_after.clone(),
        violation: contained.violation.clone(),
    };
    let path = run_dir.join(EXECUTION_JSON);
    crate::fsio::write_json_atomic(&path, &doc).map_err(CaseError::io("write", path))
}

/// Runs `agent` on the open run under `policy`.
///
/// # Errors
///
/// `InvestigateError::Case` when the run's path cannot be made absolute or its
/// lifecycle cannot be read, or when the agent's home, the files its command needs or
/// `execution.json` cannot be written; `InvestigateError::NotOpen` when the run is past
/// `open`; `InvestigateError::RunPathNotUtf8` when the run path is not UTF-8;
/// `InvestigateError::Endpoint` when, under bubblewrap, the model's base URL cannot be
/// bridged into the sandbox; `InvestigateError::Sandbox` when the backend refuses before
/// anything is spawned (see `SandboxError`), a repository snapshot fails or the runner
/// fails. An agent that exits non-zero, times out or is cancelled is not an error: that is
/// the report's `outcome`.
pub fn investigate(
    handle: &RunHandle,
    agent: &dyn ProcessAgent,
    policy: &ExecutionPolicy,
    cancel: &CancelHandle,
    mut progress: impl FnMut(Progress) + Send,
) -> Result<InvestigateReport, InvestigateError> {
    // The agent runs with the run directory as its working directory, so every path handed
    // to it must be absolute: a relative run path would be resolved twice (`RUN/RUN/…`).
    let handle = handle.absolute()?;
    let run = handle.run();
    let run_dir = handle.dir();
    let lc = handle.lifecycle()?;
    if lc.state != State::Open {
        return Err(InvestigateError::NotOpen(lc.state));
    }
    let command = agent.command(run, policy);
    let mut env = prepare_agent(&handle, &command, policy)?;

    let mut plan = SandboxPlan::for_run(&handle, &policy.engine, policy.hidden.clone());
    if matches!(policy.backend, Backend::Bubblewrap) && !command.allow.is_empty() {
        let (endpoint, extra) = model_endpoint(agent.model_api(), &env)?;
        plan.endpoints.push(endpoint);
        env.extend(extra);
    }
    let spec = ProcessSpec {
        program: command.program.clone(),
        args: command.args.clone(),
        cwd: run_dir.to_path_buf(),
        env,
        timeout: policy.timeout,
        install_hint: command.install_hint.clone(),
        log_path: Some(run_dir.join(EXECUTION_LOG)),
    };
    let accounting = agent.accounting(policy);
    let mut usage = Usage::default();
    let mut transcript = Vec::new();
    let driver_name = agent.name();
    let contained = run_contained_blocking(&policy.backend, &spec, &plan, cancel, |line| {
        tracing::info!(target: "anvil_bench::agent", driver = %driver_name, stream = ?line.stream, "{}", line.text);
        accounting.observe(&mut usage, &line.text);
        transcript.extend(accounting.events(&line.text));
        progress(Progress {
            line,
            usage: &usage,
        });
    })?;
    let mut contained = contained;
    if policy.hidden.is_empty() {
        unattest_labels(&mut contained.attestation);
    }
    let backend = serde_json::to_value(policy.backend.kind())
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    write_execution(
        run_dir,
        agent.name(),
        backend.clone(),
        &contained,
        &usage,
        transcript,
    )?;

    let lc = handle.lifecycle()?;
    let result: Option<Value> =
        crate::case::store::read_doc(run_dir, crate::case::store::RESULT_JSON)
            .ok()
            .flatten();
    Ok(InvestigateReport {
        format: "anvil-investigation",
        format_version: 1,
        run: run_dir.display().to_string(),
        driver: agent.name(),
        backend,
        outcome: contained.record.outcome,
        failure: contained.record.failure_message(),
        state: lc.state,
        status: result.and_then(|r| r.get("status").cloned()),
        usage,
        process_ms: Some(contained.record.duration_ms),
        attestation: Some(contained.attestation),
        violation: contained.violation,
    })
}
