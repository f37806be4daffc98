//! The process runner, the ground the agent stack stands on: spawns one child process (an
//! agent, or `bwrap` around one) and owns its lifecycle — its process group, its streamed
//! output, its timeout and cancellation. It knows nothing of sandboxes, drivers or MCP.
//!
//! Invariant: the run owns the child's process group. When [`run`] returns — completed,
//! failed, timed out, cancelled or with an error — nothing in that group is left running, and
//! every line the child wrote reached `on_line` and the execution log as it arrived, never
//! buffered until exit.
//!
//! The child gets exactly [`ProcessSpec::env`] (the ambient environment is cleared), stdin
//! from `/dev/null`, and a process group of its own. The program is looked up on the child's
//! own `PATH`, never the engine's. A non-zero exit is a result, not an error: it is recorded
//! as [`Outcome::Failed`] and explained by [`ExecutionRecord::failure_message`].

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::case::lifecycle::now;

/// Longest line kept whole; a longer one is split, so a child cannot exhaust memory.
const MAX_LINE_BYTES: u64 = 8 * 1024 * 1024;
/// How long output may still arrive once the child exited and its group was killed. Only a
/// process that left the group can hold a pipe open that long.
const DRAIN_GRACE: Duration = Duration::from_secs(5);
/// How many stderr lines a failure message quotes.
const STDERR_TAIL: usize = 10;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// A bare name (looked up on `env["PATH"]`) or a path (relative to `cwd`).
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// The exact child environment: nothing else is inherited.
    pub env: BTreeMap<String, String>,
    /// Hard wall-clock cap; when it passes, the whole process group is killed.
    pub timeout: Duration,
    /// How to install the program, quoted when it is not found
    /// (e.g. `npm i -g @anthropic-ai/claude-code`).
    pub install_hint: Option<String>,
    /// Execution log: every line is appended here as one JSON [`LogLine`] as it arrives.
    pub log_path: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One line the child wrote, stamped when the runner read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LogLine {
    pub stream: Stream,
    pub at: String,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Exited with status 0.
    Completed,
    /// Exited non-zero or was killed by a signal it did not get from the runner.
    Failed,
    /// The wall-clock timeout passed; the runner killed the process group.
    TimedOut,
    /// The cancel handle fired; the runner killed the process group.
    Cancelled,
}

/// What happened to one child process. Embedded in the run's execution record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExecutionRecord {
    pub program: String,
    pub args: Vec<String>,
    /// RFC 3339 UTC with milliseconds, taken just before the spawn.
    pub started_at: String,
    /// RFC 3339 UTC with milliseconds, taken once the child was reaped and output drained.
    pub ended_at: String,
    /// Measured on the monotonic clock between the two stamps.
    pub duration_ms: u64,
    pub timeout_ms: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub outcome: Outcome,
    pub lines: Vec<LogLine>,
}

impl ExecutionRecord {
    /// An actionable explanation when the run did not complete: the exit code or signal,
    /// the timeout or the cancellation, then the last stderr lines. `None` on success.
    #[must_use]
    pub fn failure_message(&self) -> Option<String> {
        let program = &self.program;
        let head = match self.outcome {
            Outcome::Completed => return None,
            Outcome::Failed => match (self.exit_code, self.signal) {
                (Some(code), _) => format!("`{program}` exited with code {code}"),
                (None, Some(signal)) => {
                    format!(
                        "`{program}` was killed by signal {signal}{}",
                        signal_name(signal)
                    )
                }
                (None, None) => format!("`{program}` failed without an exit status"),
            },
            Outcome::TimedOut => format!(
                "`{program}` timed out after {} and its process group was killed",
                seconds(self.timeout_ms)
            ),
            Outcome::Cancelled => {
                format!("`{program}` was cancelled and its process group was killed")
            }
        };
        let stderr: Vec<&str> = self
            .lines
            .iter()
            .filter(|l| l.stream == Stream::Stderr)
            .map(|l| l.text.as_str())
            .collect();
        let tail = &stderr[stderr.len().saturating_sub(STDERR_TAIL)..];
        Some(if tail.is_empty() {
            format!("{head}; it wrote nothing to stderr")
        } else {
            format!("{head}; last stderr lines:\n  {}", tail.join("\n  "))
        })
    }
}

fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{}s", s.trim_end_matches('0'))
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => " (SIGHUP)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGPIPE => " (SIGPIPE)",
        libc::SIGTERM => " (SIGTERM)",
        _ => "",
    }
}

/// Why a run could not be carried out. A child that ran and failed is not one of these.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(
        "`{program}` not found{}{}",
        if *on_path { " on PATH" } else { "" },
        hint.as_deref().map(|h| format!("; install with {h}")).unwrap_or_default()
    )]
    NotFound {
        program: String,
        /// Looked up on the child's PATH (a bare name) rather than at a path.
        on_path: bool,
        hint: Option<String>,
    },
    #[error("`{program}` at `{}` is not executable (permission denied)", path.display())]
    NotExecutable { program: String, path: PathBuf },
    #[error("working directory `{}` is not usable: {source}", path.display())]
    WorkingDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot read the output of `{program}`: {source}")]
    Output {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot wait for `{program}`: {source}")]
    Wait {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot append to the execution log `{}`: {source}", path.display())]
    Log {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot start the async runtime: {source}")]
    Runtime {
        #[source]
        source: io::Error,
    },
}

impl RunnerError {
    /// A stable, machine-readable name for this kind of failure.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            RunnerError::NotFound { .. } => "program_not_found",
            RunnerError::NotExecutable { .. } => "program_not_executable",
            RunnerError::WorkingDir { .. } => "bad_working_directory",
            RunnerError::Spawn { .. } => "spawn_failed",
            RunnerError::Output { .. } => "output_unreadable",
            RunnerError::Wait { .. } => "wait_failed",
            RunnerError::Log { .. } => "log_write_failed",
            RunnerError::Runtime { .. } => "runtime_failed",
        }
    }
}

/// Asks a run to stop. Clones share one flag; cancelling is sticky and idempotent, and may
/// happen from any thread, before or during the run.
#[derive(Debug, Clone)]
pub struct CancelHandle(Arc<watch::Sender<bool>>);

impl Default for CancelHandle {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelHandle {
    #[must_use]
    pub fn new() -> Self {
        CancelHandle(Arc::new(watch::Sender::new(false)))
    }

    pub fn cancel(&self) {
        self.0.send_replace(true);
    }

    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once [`CancelHandle::cancel`] has been called.
    pub async fn cancelled(&self) {
        let mut rx = self.0.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = rx.wait_for(|cancelled| *cancelled).await;
    }
}

/// The child's process group. Killing it is only sound while the leader is unreaped: until
/// then its id cannot be reused, so the signal cannot reach an unrelated group.
struct Group {
    pgid: libc::pid_t,
    reaped: bool,
}

impl Group {
    fn kill(&self) {
        if !self.reaped {
            // SAFETY: kill(2) takes plain integers; a negative id signals the whole group,
            // whose leader is our own unreaped child. ESRCH (already gone) is fine. The
            // leader is also signalled directly, in case it managed to leave its group.
            unsafe {
                libc::kill(-self.pgid, libc::SIGKILL);
                libc::kill(self.pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Group {
    /// A run dropped mid-flight (its future cancelled) still leaves nothing running.
    fn drop(&mut self) {
        self.kill();
    }
}

/// Blocks until `pid` has exited, without reaping it, so its process group id stays ours.
fn wait_exited(pid: libc::pid_t) -> io::Result<()> {
    // `pid` came from the child's (unsigned) id, so it always converts.
    let id = libc::id_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    loop {
        // SAFETY: siginfo_t is plain data for which all-zero is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t; WNOWAIT leaves the child waitable.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                id,
                &raw mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// `Some(true)` for an executable regular file, `Some(false)` for something that exists but
/// cannot be executed, `None` when nothing is there.
fn executable(path: &Path) -> Option<bool> {
    let meta = std::fs::metadata(path).ok()?;
    Some(meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Finds the program the way execvp would, but on the child's PATH.
fn resolve(spec: &ProcessSpec) -> Result<PathBuf, RunnerError> {
    let not_executable = |path: PathBuf| RunnerError::NotExecutable {
        program: spec.program.clone(),
        path,
    };
    let not_found = |on_path| RunnerError::NotFound {
        program: spec.program.clone(),
        on_path,
        hint: spec.install_hint.clone(),
    };
    if spec.program.contains('/') {
        let path = spec.cwd.join(&spec.program);
        return match executable(&path) {
            Some(true) => Ok(path),
            Some(false) => Err(not_executable(path)),
            None => Err(not_found(false)),
        };
    }
    if spec.program.is_empty() {
        return Err(not_found(true));
    }
    let mut unusable = None;
    let dirs = spec.env.get("PATH").map_or("", String::as_str);
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        let candidate = spec.cwd.join(dir).join(&spec.program);
        match executable(&candidate) {
            Some(true) => return Ok(candidate),
            Some(false) => {
                unusable.get_or_insert(candidate);
            }
            None => {}
        }
    }
    Err(match unusable {
        Some(path) => not_executable(path),
        None => not_found(true),
    })
}

type Read = io::Result<(Stream, String)>;

/// Reads `pipe` line by line, sending each line the moment it is complete.
fn spawn_reader<R>(pipe: Option<R>, stream: Stream, tx: mpsc::Sender<Read>) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let Some(pipe) = pipe else { return };
        let mut reader = BufReader::new(pipe);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match (&mut reader)
                .take(MAX_LINE_BYTES)
                .read_until(b'\n', &mut buf)
                .await
            {
                Ok(0) => return,
                Ok(_) => {
                    if buf.last() == Some(&b'\n') {
                        buf.pop();
                        if buf.last() == Some(&b'\r') {
                            buf.pop();
                        }
                    }
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    if tx.send(Ok((stream, text))).await.is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            }
        }
    })
}

fn append(path: &Path, line: &LogLine) -> Result<(), RunnerError> {
    let log_err = |source| RunnerError::Log {
        path: path.to_path_buf(),
        source,
    };
    let json = serde_json::to_string(line).map_err(|e| log_err(io::Error::other(e)))?;
    crate::fsio::append_line(path, &json).map_err(log_err)
}

/// Refuses a working directory that is not an existing directory.
fn check_cwd(cwd: &Path) -> Result<(), RunnerError> {
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(RunnerError::WorkingDir {
            path: cwd.to_path_buf(),
            source: io::Error::other("not a directory"),
        }),
        Err(source) => Err(RunnerError::WorkingDir {
            path: cwd.to_path_buf(),
            source,
        }),
    }
}

/// Starts the program at `path` (resolved from `spec`) in a process group of its own,
/// with exactly `spec`'s environment, no stdin, and both output streams piped.
fn spawn(spec: &ProcessSpec, path: &Path) -> Result<tokio::process::Child, RunnerError> {
    tokio::process::Command::new(path)
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(&spec.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| match source.kind() {
            io::ErrorKind::PermissionDenied => RunnerError::NotExecutable {
                program: spec.program.clone(),
                path: path.to_path_buf(),
            },
            _ => RunnerError::Spawn {
                program: spec.program.clone(),
                source,
            },
        })
}

/// Runs `spec` to the end: streams every line to `on_line` and the log as it arrives,
/// enforces the timeout and `cancel`, and returns what happened. Must be called inside a
/// tokio runtime with IO and time enabled.
///
/// # Errors
///
/// `RunnerError::WorkingDir` when `spec.cwd` is not a usable directory;
/// `RunnerError::NotFound` or `RunnerError::NotExecutable` when the program cannot be
/// resolved on the child's `PATH` or run; `RunnerError::Spawn` when it cannot be started;
/// `RunnerError::Output` when reading its output fails; `RunnerError::Log` when a line
/// cannot be appended to `spec.log_path`; `RunnerError::Wait` when the child cannot be
/// waited for. A non-zero exit, a signal, the timeout or a cancellation is not an error: it
/// is the record's `outcome`.
pub async fn run(
    spec: &ProcessSpec,
    cancel: &CancelHandle,
    mut on_line: impl FnMut(&LogLine) + Send,
) -> Result<ExecutionRecord, RunnerError> {
    check_cwd(&spec.cwd)?;
    let path = resolve(spec)?;
    let started_at = now();
    let clock = Instant::now();
    let mut child = spawn(spec, &path)?;
    let Some(pid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else {
        return Err(RunnerError::Wait {
            program: spec.program.clone(),
            source: io::Error::other("the child has no process id"),
        });
    };
    // process_group(0): the child leads a group whose id is its pid.
    let mut group = Group {
        pgid: pid,
        reaped: false,
    };

    let (tx, mut rx) = mpsc::channel::<Read>(256);
    let readers = [
        spawn_reader(child.stdout.take(), Stream::Stdout, tx.clone()),
        spawn_reader(child.stderr.take(), Stream::Stderr, tx),
    ];
    let mut exited = tokio::task::spawn_blocking(move || wait_exited(pid));
    let Streamed {
        lines,
        forced,
        result: streamed,
    } = stream_output(spec, cancel, &mut on_line, &mut rx, &mut exited, &group).await;
    for reader in readers {
        reader.abort();
    }
    if streamed.is_err() {
        group.kill();
    }
    let status = child.wait().await;
    group.reaped = true;
    streamed?;
    let status = status.map_err(|source| RunnerError::Wait {
        program: spec.program.clone(),
        source,
    })?;

    let outcome = forced.unwrap_or(if status.success() {
        Outcome::Completed
    } else {
        Outcome::Failed
    });
    Ok(ExecutionRecord {
        program: spec.program.clone(),
        args: spec.args.clone(),
        started_at,
        ended_at: now(),
        duration_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
        timeout_ms: u64::try_from(spec.timeout.as_millis()).unwrap_or(u64::MAX),
        exit_code: status.code(),
        signal: status.signal(),
        outcome,
        lines,
    })
}

/// What streaming a child's output came to.
struct Streamed {
    /// Every line read, in the order it arrived.
    lines: Vec<LogLine>,
    /// The outcome forced on the child: the timeout or a cancellation.
    forced: Option<Outcome>,
    /// The first failure to read the output or to append a line to the log.
    result: Result<(), RunnerError>,
}

/// Streams the child's lines to `on_line` and the log until the leader has exited and the
/// pipes are drained (or the drain grace is over), killing the group on the timeout, on
/// `cancel` and when the leader exits; stops at the first read or log failure.
async fn stream_output(
    spec: &ProcessSpec,
    cancel: &CancelHandle,
    on_line: &mut (impl FnMut(&LogLine) + Send),
    rx: &mut mpsc::Receiver<Read>,
    exited: &mut JoinHandle<io::Result<()>>,
    group: &Group,
) -> Streamed {
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    let mut drain_until = tokio::time::Instant::now();

    let mut lines = Vec::new();
    let mut forced: Option<Outcome> = None;
    let mut child_exited = false;
    let mut streams_open = true;
    let result: Result<(), RunnerError> = loop {
        if child_exited && !streams_open {
            break Ok(());
        }
        tokio::select! {
            read = rx.recv(), if streams_open => match read {
                None => streams_open = false,
                Some(Err(source)) => break Err(RunnerError::Output {
                    program: spec.program.clone(),
                    source,
                }),
                Some(Ok((stream, text))) => {
                    let line = LogLine { stream, at: now(), text };
                    if let Some(log) = &spec.log_path
                        && let Err(e) = append(log, &line)
                    {
                        break Err(e);
                    }
                    on_line(&line);
                    lines.push(line);
                }
            },
            _ = &mut *exited, if !child_exited => {
                // Whatever waitid said, the leader is gone or going: kill what it left behind
                // while its group id is still ours, then give the pipes a bounded drain.
                child_exited = true;
                group.kill();
                drain_until = tokio::time::Instant::now() + DRAIN_GRACE;
            },
            () = &mut deadline, if forced.is_none() && !child_exited => {
                group.kill();
                forced = Some(Outcome::TimedOut);
            },
            () = cancel.cancelled(), if forced.is_none() && !child_exited => {
                group.kill();
                forced = Some(Outcome::Cancelled);
            },
            () = tokio::time::sleep_until(drain_until), if child_exited && streams_open => {
                streams_open = false;
            },
        }
    };
    Streamed {
        lines,
        forced,
        result,
    }
}

/// Blocking convenience wrapper: builds a current-thread runtime and drives [`run`] on it.
/// Must not be called from inside a tokio runtime.
///
/// # Errors
///
/// `RunnerError::Runtime` when the runtime cannot be built, or any error of [`run`].
pub fn run_blocking(
    spec: &ProcessSpec,
    cancel: &CancelHandle,
    on_line: impl FnMut(&LogLine) + Send,
) -> Result<ExecutionRecord, RunnerError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| RunnerError::Runtime { source })?;
    runtime.block_on(run(spec, cancel, on_line))
}
