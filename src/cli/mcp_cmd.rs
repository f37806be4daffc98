//! `mcp serve`: the case rails as MCP tools over stdio.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::cli::exit::{self, ToExitCode};

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Serve one run's rails (and read-only investigation tools) as MCP tools on stdin and
    /// stdout, until stdin closes. Inside a sandbox the rails go through the rail relay.
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The run directory.
    #[arg(long, value_name = "RUN")]
    pub run: PathBuf,
}

pub fn run(cmd: McpCommand) -> u8 {
    match cmd {
        // Opened by its absolute path, as the server hands the run's paths on.
        McpCommand::Serve(a) => match super::open_absolute(&a.run)
            .map_err(crate::mcp::McpError::Case)
            .and_then(|run| crate::mcp::serve_stdio(&run))
        {
            Ok(()) => exit::OK,
            Err(crate::mcp::McpError::Case(e)) => super::fail(&e, false),
            Err(e) => {
                eprintln!("error: {e}");
                e.exit_code()
            }
        },
    }
}
