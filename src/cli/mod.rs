//! The command-line interface: clap types and one function per subcommand.
//!
//! Parse, call the library, print. Human output goes to stdout; errors go to stderr as
//! `error: …` (and, with `--json`, also as a JSON object on stdout).

mod air_cmd;
mod battery_args;
mod battery_cmd;
mod case_cmd;
mod demo_cmd;
mod detect_cmd;
pub mod exit;
mod investigate_cmd;
mod mcp_cmd;
mod query_cmd;
mod rails_cmd;
mod replay_cmd;
mod report_cmd;
mod sandbox_cmd;
mod scenarios_cmd;
mod skills_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde::Serialize;

use self::exit::ToExitCode;
use crate::case::CaseError;

#[derive(Debug, Parser)]
#[command(
    name = "anvil-bench",
    version,
    about = "Let a coding agent investigate a repository and propose one grounded fix to an API model",
    long_about = "Let a coding agent investigate a repository and propose one grounded fix to an API \
model (AIR), while the engine owns case identity, the target, evidence admissibility, the mutation \
boundary, validation, reconciliation and application.\n\n\
Exit codes: 0 ok, 1 rejected by a rail (validation, policy, binding, bad input), 2 usage, \
3 conflict (idempotency or lock), 4 containment violation, 5 driver failure or timeout."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Detect deficiencies in an AIR document: the deterministic refinement plan.
    Detect(detect_cmd::DetectArgs),
    /// Import OpenAPI/Swagger descriptions into AIR and export refined AIR back into them.
    #[command(subcommand)]
    Air(air_cmd::AirCommand),
    /// List the built-in skill contracts.
    Skills(skills_cmd::SkillsArgs),
    /// Run scripted cases end to end on the bundled payments example: open, investigate
    /// through the rails, validate, finalize, close, and apply what is auto-approved.
    Demo(demo_cmd::DemoArgs),
    /// Cases: open runs, call the rails, investigate with an agent, query, close.
    #[command(subcommand)]
    Case(Box<case_cmd::CaseCommand>),
    /// Serve the Anthropic Messages API on loopback, played by a script or a deterministic
    /// investigation policy, so a real agent client runs without a model or network.
    ReplayModel(replay_cmd::ReplayArgs),
    /// Serve a run's rails as MCP tools (`mcp serve --run RUN`).
    #[command(subcommand)]
    Mcp(mcp_cmd::McpCommand),
    /// Check, list and seal the scenario corpus and its labels.
    #[command(subcommand)]
    Scenarios(scenarios_cmd::ScenariosCommand),
    /// The effectiveness battery: score an investigator against the deterministic baseline
    /// over a scenario corpus with hidden labels, class by class, with both controls.
    Battery(Box<battery_args::BatteryArgs>),
    /// Views of battery results: `report show DIR` (md, html, json, junit) and
    /// `report diff A B`.
    #[command(subcommand)]
    Report(report_cmd::ReportCommand),
    /// The negative control's agent (run by the battery).
    #[command(hide = true)]
    BatteryCheater(battery_cmd::CheaterArgs),
    /// The first process inside a bubblewrap sandbox (written by the engine).
    #[command(hide = true)]
    SandboxInit(sandbox_cmd::SandboxInitArgs),
}

impl Command {
    /// Whether the command runs servers, agents or other processes (and so must see a
    /// broken pipe as an error, not die of it).
    fn serves_or_spawns(&self) -> bool {
        match self {
            Command::Case(c) => matches!(**c, case_cmd::CaseCommand::Investigate(_)),
            Command::ReplayModel(_)
            | Command::Mcp(_)
            | Command::Battery(_)
            | Command::BatteryCheater(_)
            | Command::SandboxInit(_) => true,
            _ => false,
        }
    }
}

/// Installs the stderr log for `ANVIL_LOG`: comma-separated `target=level` pairs or a bare
/// level (`warn`, `anvil_bench::agent=info,warn`), as `tracing_subscriber`'s `Targets` reads
/// them. `Targets` rather than `EnvFilter`: its span-field directives are not needed here,
/// and `EnvFilter` turns on full-DFA construction in `regex-automata` for every regex the
/// process compiles, which every rail pays for whether or not it logs.
fn init_logging(filter: &std::ffi::OsStr) -> Result<(), String> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let text = filter
        .to_str()
        .ok_or_else(|| "ANVIL_LOG is not valid UTF-8".to_string())?;
    let targets: tracing_subscriber::filter::Targets = text
        .parse()
        .map_err(|e| format!("ANVIL_LOG={text:?} is not a log filter ({e}); expected comma-separated `target=level` or a level, e.g. `anvil_bench::agent=info`"))?;
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .finish()
        .with(targets)
        .try_init();
    Ok(())
}

/// Entry point used by `main.rs`.
pub fn main() -> ExitCode {
    // `ANVIL_LOG=anvil_bench::agent=info` streams every agent output line to stderr.
    if let Some(filter) = std::env::var_os("ANVIL_LOG")
        && let Err(e) = init_logging(&filter)
    {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    match crate::sandbox::init::relay_rail_if_sandboxed() {
        Some(Ok(outcome)) => return ExitCode::from(outcome.exit_code()),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(e.exit_code());
        }
        None => {}
    }
    let cli = Cli::parse();
    if !cli.command.serves_or_spawns() {
        // A command that only computes and prints dies quietly when its reader goes away
        // (`… --json | head`), as ripgrep does, instead of panicking on the broken pipe.
        // Commands that talk to children or sockets keep SIGPIPE ignored and see EPIPE.
        // SAFETY: restoring the default disposition of one signal, before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let code = match cli.command {
        Command::Detect(args) => detect_cmd::detect(&args),
        Command::Air(cmd) => air_cmd::run(cmd),
        Command::Skills(args) => skills_cmd::skills(&args),
        Command::Demo(args) => demo_cmd::demo(args),
        Command::Case(cmd) => case_cmd::run(*cmd),
        Command::ReplayModel(args) => replay_cmd::run(&args),
        Command::Mcp(cmd) => mcp_cmd::run(cmd),
        Command::Scenarios(cmd) => scenarios_cmd::run(cmd),
        Command::Battery(args) => battery_cmd::run(*args),
        Command::Report(cmd) => report_cmd::run(&cmd),
        Command::BatteryCheater(args) => battery_cmd::cheater(args),
        Command::SandboxInit(args) => sandbox_cmd::sandbox_init(&args),
    };
    ExitCode::from(code)
}

/// Opens the run at `dir` by its absolute path, for a command that hands the run's paths to
/// a process working elsewhere (an agent, an MCP client), so errors name that same path.
fn open_absolute(dir: &std::path::Path) -> Result<crate::case::RunHandle, CaseError> {
    let dir = std::path::absolute(dir).map_err(CaseError::io("resolve", dir))?;
    crate::case::RunHandle::open(&dir)
}

/// Prints a refusal and returns its exit code.
pub(crate) fn fail(err: &CaseError, json: bool) -> u8 {
    let code = err.exit_code();
    eprintln!("error: {err}");
    if json {
        #[derive(Serialize)]
        struct ErrorDoc<'a> {
            error: ErrorBody<'a>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct ErrorBody<'a> {
            kind: &'a str,
            message: String,
            exit_code: u8,
        }
        print_json(&ErrorDoc {
            error: ErrorBody {
                kind: err.kind(),
                message: err.to_string(),
                exit_code: code,
            },
        });
    }
    code
}

pub(crate) fn print_json<T: Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("error: cannot render JSON: {e}"),
    }
}
