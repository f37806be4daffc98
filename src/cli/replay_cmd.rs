//! `replay-model`: serve the Anthropic Messages API and the OpenAI Responses API on loopback
//! with a deterministic player.

use std::io::{Read as _, Write as _};
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::exit;
use crate::replay::{Player, ServeOptions, router, serve};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Policy {
    /// Search the repository for the target, read the best hits, call the rails, propose,
    /// validate and finalize (or decline honestly).
    Heuristic,
}

#[derive(Debug, Args)]
#[command(after_long_help = "\
Point Claude Code at it with ANTHROPIC_BASE_URL=http://ADDR (any ANTHROPIC_API_KEY). Point \
Codex at it as a model provider speaking the Responses API: `codex exec -m replay -c \
model_provider=replay -c model_providers.replay.name=\"replay\" -c \
model_providers.replay.base_url=\"http://ADDR/v1\" -c model_providers.replay.wire_api=\"responses\"` \
(`case investigate --driver codex` and the battery do this themselves from OPENAI_BASE_URL). \
Both wires play the same script or policy on one listener. The first line on stdout is `listening on http://ADDR` (with --json, one JSON object on one line), so a \
test can start the server on port 0 and read where it landed. Requests are logged to stderr.\n\n\
Stopping: SIGINT or SIGTERM; or, with --exit-on-stdin-eof, closing the server's stdin — the \
reliable way for a test harness (spawn it with a piped stdin and drop the pipe). Open \
connections get two seconds to finish.")]
pub struct ReplayArgs {
    /// Address to listen on, a loopback one (port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0", value_parser = loopback)]
    pub listen: SocketAddr,
    /// Play the turns of an `anvil-replay-script` v1 document: `{"format":
    /// "anvil-replay-script", "formatVersion": 1, "turns": [{"content": [{"type": "text",
    /// "text": …}, {"type": "tool_use", "name": "Bash", "input": {…}}]}]}`. Turn N answers
    /// the request that already holds N assistant turns; strings may embed `{{result.K}}`
    /// (the K-th tool result, 0-based) or `{{result.K|REGEX}}` (its first match or first
    /// capture group). Unknown fields are refused with their path.
    #[arg(long, value_name = "FILE", conflicts_with = "policy")]
    pub script: Option<PathBuf>,
    /// Play a built-in policy (the default when no script is given).
    #[arg(long, value_enum)]
    pub policy: Option<Policy>,
    /// Append every request and answer to FILE as JSON lines.
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// Shut down when stdin reaches end of file.
    #[arg(long)]
    pub exit_on_stdin_eof: bool,
    /// Print the listening line as a JSON object.
    #[arg(long)]
    pub json: bool,
    /// Wait this many milliseconds before each model answer (simulated think time, for
    /// measuring the harness against a latency-bound agent).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub latency_ms: u64,
}

/// `--listen`: a socket address on loopback. The server answers anyone who can connect
/// (no key), so it never listens where another host could reach it.
fn loopback(raw: &str) -> Result<SocketAddr, String> {
    let addr: SocketAddr = raw
        .parse()
        .map_err(|e| format!("`{raw}` is not an address and port: {e}"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "`{raw}` is not a loopback address; replay-model serves only on loopback \
             (127.0.0.1 or [::1])"
        ));
    }
    Ok(addr)
}

/// `eprintln!` that drops a write error: SIGPIPE is ignored here, so a stderr nobody reads
/// any more is EPIPE, and that must not turn into a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub fn run(args: &ReplayArgs) -> u8 {
    let player = match &args.script {
        Some(path) => match Player::from_script_file(path) {
            Ok(p) => p,
            Err(e) => {
                say!("error: {e}");
                return exit::REJECTED;
            }
        },
        None => match args.policy.unwrap_or(Policy::Heuristic) {
            Policy::Heuristic => Player::Heuristic,
        },
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            say!("error: cannot start the async runtime: {e}");
            return exit::DRIVER;
        }
    };
    let options = ServeOptions {
        transcript: args.transcript.clone(),
        quiet: false,
        latency: std::time::Duration::from_millis(args.latency_ms),
    };
    let code = runtime.block_on(async move {
        let app = match router(player.clone(), &options) {
            Ok(app) => app,
            Err(e) => {
                say!("error: {e}");
                return exit::REJECTED;
            }
        };
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(l) => l,
            Err(e) => {
                say!("error: cannot listen on {}: {e}", args.listen);
                return exit::REJECTED;
            }
        };
        let addr = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let url = format!("http://{addr}");
        let line = if args.json {
            serde_json::json!({"format": "anvil-replay-listening", "formatVersion": 1,
                "url": url, "address": addr, "player": player.name()})
            .to_string()
        } else {
            format!("listening on {url}")
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
        drop(out);
        match serve(listener, app, shutdown_signal(args.exit_on_stdin_eof)).await {
            Ok(()) => exit::OK,
            Err(e) => {
                say!("error: server failed: {e}");
                exit::DRIVER
            }
        }
    });
    // Do not wait for the stdin reader thread.
    runtime.shutdown_background();
    code
}

/// Resolves on SIGINT, SIGTERM, or (when asked) end of stdin.
async fn shutdown_signal(stdin_eof: bool) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    if stdin_eof {
        // A plain thread: blocking reads must not hold up the runtime's shutdown.
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let mut stdin = std::io::stdin();
            while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
            let _ = tx.send(());
        });
    }
    let stdin_closed = async move {
        if stdin_eof {
            let _ = rx.await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => say!("replay-model: interrupted, shutting down"),
        () = term => say!("replay-model: terminated, shutting down"),
        () = stdin_closed => say!("replay-model: stdin closed, shutting down"),
    }
}
