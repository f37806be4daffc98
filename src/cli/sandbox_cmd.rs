//! `sandbox-init`: the hidden first process of a bubblewrap sandbox (see
//! [`crate::sandbox::init`]). Not for people: the engine writes this command line.

use clap::Args;

use crate::cli::exit::ToExitCode;
use crate::sandbox::bridge::Forward;
use crate::sandbox::init::InitError;

#[derive(Debug, Args)]
pub struct SandboxInitArgs {
    /// Listen on ADDR inside the sandbox and relay each connection to the Unix SOCKET.
    #[arg(long = "forward", value_name = "ADDR=SOCKET")]
    pub forwards: Vec<Forward>,
    /// The agent program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub command: Vec<String>,
}

pub fn sandbox_init(args: &SandboxInitArgs) -> u8 {
    let (program, rest) = args
        .command
        .split_first()
        .map_or(("", &[][..]), |(p, r)| (p.as_str(), r));
    match crate::sandbox::init::sandbox_init(&args.forwards, program, rest) {
        // The agent's own status, passed through.
        Ok(status) => status,
        Err(e) => {
            // An agent with no status was never reported; the others always were.
            if !matches!(e, InitError::NoStatus { .. }) {
                eprintln!("error: sandbox-init: {e}");
            }
            e.exit_code()
        }
    }
}
