//! What runs inside the sandbox: `anvil-bench sandbox-init`, the sandbox's first process,
//! and the rail client `anvil-bench case …` becomes when the relay socket is set.
//!
//! Invariant: `sandbox-init` starts the agent only once every forward is listening, and
//! exits with the agent's status (128 + signal when it was killed), so the runner sees the
//! agent's outcome through `bwrap`.

use std::path::Path;
use std::process::Command;

use super::bridge::{Forward, serve_forwards};
use super::relay::{RAIL_SOCKET_ENV, call};
use crate::exit;

/// Starts the forwards, runs `program args`, and returns the exit code to leave with.
pub fn sandbox_init(forwards: &[Forward], program: &str, args: &[String]) -> u8 {
    if let Err(e) = serve_forwards(forwards) {
        eprintln!("error: sandbox-init: {e}");
        return exit::DRIVER;
    }
    let status = match Command::new(program).args(args).status() {
        Ok(status) => status,
        Err(e) => {
            eprintln!("error: sandbox-init: cannot start `{program}`: {e}");
            return exit::DRIVER;
        }
    };
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code).unwrap_or(u8::MAX),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(u8::MAX),
        (None, None) => exit::DRIVER,
    }
}

/// When this process runs inside a sandbox with a rail relay and was asked for a `case`
/// command, relays it to the engine, prints the rail's output and returns its exit code.
/// `None` when the command is to run here as usual.
pub fn relay_rail_if_sandboxed() -> Option<u8> {
    let socket = std::env::var_os(RAIL_SOCKET_ENV)?;
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.first().map(String::as_str) != Some("case") {
        return None;
    }
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            eprintln!("error: cannot read the working directory: {e}");
            return Some(exit::DRIVER);
        }
    };
    match call(Path::new(&socket), &args, &cwd) {
        Ok(reply) => {
            print!("{}", reply.stdout);
            eprint!("{}", reply.stderr);
            Some(reply.exit_code)
        }
        Err(e) => {
            eprintln!(
                "error: cannot reach the engine's rail relay at `{}`: {e}",
                Path::new(&socket).display()
            );
            Some(exit::DRIVER)
        }
    }
}
