//! What runs inside the sandbox: `anvil-bench sandbox-init`, the sandbox's first process,
//! and the rail client `anvil-bench case …` becomes when the relay socket is set.
//!
//! Invariant: `sandbox-init` starts the agent only once every forward is listening, and
//! hands back the agent's status (128 + signal when it was killed) for the CLI to exit
//! with, so the runner sees the agent's outcome through `bwrap`. Its own failures are typed
//! ([`InitError`]); the exit code they get is the CLI's.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::bridge::{Forward, serve_forwards};
use super::relay::{RAIL_SOCKET_ENV, RelayOutcome, call};

/// Why `sandbox-init` could not run the agent to a status of its own.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{0}")]
    Forwards(#[source] io::Error),
    #[error("cannot start `{program}`: {source}")]
    Start {
        program: String,
        #[source]
        source: io::Error,
    },
    /// The agent ended with neither an exit code nor a signal.
    #[error("`{program}` ended with no exit status")]
    NoStatus { program: String },
}

/// Starts the forwards, runs `program args`, and returns the agent's status: its exit code,
/// or 128 + the signal that killed it (saturating at 255).
///
/// # Errors
///
/// `InitError::Forwards` when a forward cannot listen, `InitError::Start` when `program`
/// cannot be started, `InitError::NoStatus` when it ended with neither an exit code nor a
/// signal.
pub fn sandbox_init(forwards: &[Forward], program: &str, args: &[String]) -> Result<u8, InitError> {
    serve_forwards(forwards).map_err(InitError::Forwards)?;
    let status = Command::new(program)
        .args(args)
        .status()
        .map_err(|source| InitError::Start {
            program: program.to_string(),
            source,
        })?;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ok(u8::try_from(code).unwrap_or(u8::MAX)),
        (None, Some(signal)) => Ok(u8::try_from(128 + signal).unwrap_or(u8::MAX)),
        (None, None) => Err(InitError::NoStatus {
            program: program.to_string(),
        }),
    }
}

/// Why a rail call from inside the sandbox got no reply.
#[derive(Debug, thiserror::Error)]
pub enum RelayClientError {
    #[error("cannot read the working directory: {0}")]
    WorkingDirectory(#[source] io::Error),
    #[error("cannot reach the engine's rail relay at `{}`: {source}", socket.display())]
    Unreachable {
        socket: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// When this process runs inside a sandbox with a rail relay and was asked for a `case`
/// command, relays it to the engine, prints the rail's output and returns how the relayed
/// call ended. `None` when the command is to run here as usual.
pub fn relay_rail_if_sandboxed() -> Option<Result<RelayOutcome, RelayClientError>> {
    let socket = std::env::var_os(RAIL_SOCKET_ENV)?;
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.first().map(String::as_str) != Some("case") {
        return None;
    }
    Some(relay(Path::new(&socket), &args))
}

fn relay(socket: &Path, args: &[String]) -> Result<RelayOutcome, RelayClientError> {
    let cwd = std::env::current_dir().map_err(RelayClientError::WorkingDirectory)?;
    let reply = call(socket, args, &cwd).map_err(|source| RelayClientError::Unreachable {
        socket: socket.to_path_buf(),
        source,
    })?;
    print!("{}", reply.stdout);
    eprint!("{}", reply.stderr);
    Ok(reply.outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The agent's own status comes back: its exit code, 128 + the signal that killed it;
    /// a program that cannot start is `Start`.
    #[test]
    fn the_agents_exit_code_or_signal_is_the_status() {
        let sh = |script: &str| sandbox_init(&[], "/bin/sh", &["-c".into(), script.into()]);
        assert_eq!(sh("exit 0").unwrap(), 0);
        assert_eq!(sh("exit 7").unwrap(), 7);
        assert_eq!(sh("kill -TERM $$").unwrap(), 128 + 15);
        assert_eq!(sh("kill -KILL $$").unwrap(), 128 + 9);
        assert!(matches!(
            sandbox_init(&[], "/nonexistent/agent", &[]),
            Err(InitError::Start { .. })
        ));
    }
}
