//! `--model-endpoint`: where a real agent's model is reached. `replay:heuristic` and
//! `replay:script=FILE` start the replay model in this process on loopback, so the real
//! CLI runs end to end with no network; a URL is used as it is.
//!
//! Invariant: a replay endpoint listens on 127.0.0.1 only, and lives exactly as long as
//! its [`Endpoint`] value.

use std::path::PathBuf;

use crate::replay::{Player, ServeOptions, router, serve};

/// A resolved model endpoint.
#[derive(Debug)]
pub struct Endpoint {
    /// The base URL agents are pointed at.
    pub url: String,
    /// How the manifest names it (`replay:heuristic`, `replay:script`, or the URL).
    pub name: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Why a model endpoint could not be had.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error(
        "--model-endpoint `{0}`: expected replay:heuristic, replay:script=FILE, or an http(s) URL"
    )]
    Spec(String),
    #[error("{0}")]
    Script(#[source] crate::replay::ScriptError),
    #[error("cannot start the replay model: {0}")]
    Serve(#[source] std::io::Error),
}

/// Resolves `spec`: `replay:heuristic`, `replay:script=FILE`, or an `http(s)://` URL.
///
/// # Errors
///
/// `EndpointError::Spec` when `spec` is none of the three forms, `Script` when the replay
/// script cannot be read or parsed, and `Serve` when the replay server cannot be built, no
/// loopback port can be bound or its serving thread spawned.
pub fn start(spec: &str, transcript: Option<PathBuf>) -> Result<Endpoint, EndpointError> {
    let player = if spec == "replay:heuristic" {
        Player::Heuristic
    } else if let Some(file) = spec.strip_prefix("replay:script=") {
        Player::from_script_file(std::path::Path::new(file)).map_err(EndpointError::Script)?
    } else if spec.starts_with("http://") || spec.starts_with("https://") {
        return Ok(Endpoint {
            url: spec.trim_end_matches('/').to_string(),
            name: spec.to_string(),
            stop: None,
            thread: None,
        });
    } else {
        return Err(EndpointError::Spec(spec.to_string()));
    };
    let name = if spec.starts_with("replay:script=") {
        "replay:script".to_string()
    } else {
        spec.to_string()
    };
    let app = router(
        player,
        &ServeOptions {
            transcript,
            quiet: true,
            latency: std::time::Duration::ZERO,
        },
    )
    .map_err(EndpointError::Serve)?;
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(EndpointError::Serve)?;
    std_listener
        .set_nonblocking(true)
        .map_err(EndpointError::Serve)?;
    let addr = std_listener.local_addr().map_err(EndpointError::Serve)?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("replay-model".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else {
                    return;
                };
                let _ = serve(listener, app, async move {
                    let _ = rx.await;
                })
                .await;
            });
        })
        .map_err(EndpointError::Serve)?;
    Ok(Endpoint {
        url: format!("http://{addr}"),
        name,
        stop: Some(tx),
        thread: Some(thread),
    })
}
