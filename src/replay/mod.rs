//! `replay-model`: a loopback server speaking enough of the Anthropic Messages API and of
//! the OpenAI Responses API that a real agent client (Claude Code through
//! `ANTHROPIC_BASE_URL`, Codex through a custom model provider) runs its whole tool loop
//! against a deterministic player instead of a model — no network, no key.
//!
//! * [`conversation`] — the core both wires share: the conversation a request carries, the
//!   turn that answers it, usage numbers derived from sizes.
//! * [`api`] — the Anthropic Messages wire: reading a request, writing a turn as JSON or SSE.
//! * [`responses`] — the OpenAI Responses wire, the same for `codex exec`.
//! * [`script`] — `--script FILE`: scripted turns with tool-result placeholders.
//! * [`heuristic`] — `--policy heuristic`: the adapter that plays the investigation of
//!   [`crate::investigator::plan`] (search, read, cite, claim, propose or prove or record a
//!   conflict, validate, finalize — or decline honestly) through [`client_tools`]: the
//!   client's shell (Claude Code's `Bash`, Codex's `exec_command`), or the `anvil` MCP
//!   server's tools ([`mcp_tools`]) when the request offers them; [`moves`] holds what both
//!   share. `simulated_claude` (tests only) plays it against a simulated Claude Code with the
//!   real MCP server.
//!
//! Endpoints: `POST /v1/messages` (streaming SSE or JSON), `POST /v1/messages/count_tokens`,
//! `POST /v1/responses` (streaming SSE or JSON), `GET /v1/models` (the one model, `replay`),
//! `GET`/`HEAD` of anything else (200, for connectivity probes such as `/api/hello`); any
//! other request gets a 404 in the API's error shape. Every request is logged to stderr
//! and, with a transcript, appended to it as one JSON line.
//!
//! Invariant: the server holds no conversation state. Which turn to play is derived from
//! the request's own history, so a retried request gets the same answer and any number of
//! conversations — on either wire — can share one server.

pub mod api;
pub mod client_tools;
pub mod conversation;
pub mod heuristic;
pub mod mcp_tools;
pub mod moves;
pub mod responses;
pub mod script;
#[cfg(test)]
mod simulated_claude;

use std::convert::Infallible;
use std::fs::File;
use std::future::Future;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::limits::{self, Limit};
use api::{Reply, error_json};
use conversation::{Conversation, Turn};
pub use script::{Script, ScriptError};

/// Who plays the assistant.
#[derive(Debug, Clone)]
pub enum Player {
    Script(Script),
    Heuristic,
}

impl Player {
    /// Loads `--script FILE`: a regular file of at most [`Limit::DocBytes`], UTF-8.
    ///
    /// # Errors
    ///
    /// A file that is not regular, over the cap, not UTF-8, or not a valid script.
    pub fn from_script_file(path: &Path) -> Result<Player, ScriptError> {
        let unreadable = |e: &dyn std::fmt::Display| ScriptError {
            path: ".".into(),
            reason: format!("cannot read `{}`: {e}", path.display()),
        };
        let bytes = limits::read_capped(path, Limit::DocBytes).map_err(|e| unreadable(&e))?;
        let text = String::from_utf8(bytes).map_err(|e| unreadable(&e.utf8_error()))?;
        Script::parse(&text).map(Player::Script)
    }

    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Player::Script(_) => "script",
            Player::Heuristic => "heuristic",
        }
    }

    /// The turn that answers `conv`, and what kind of request it was. A request that
    /// offers no tools is a side call of the client (a title, a quota probe): it gets a
    /// short text reply.
    #[must_use]
    pub fn turn(&self, conv: &Conversation) -> (Turn, &'static str) {
        if conv.tools.is_empty() {
            return (Turn::text("Replay model."), "auxiliary");
        }
        let turn = match self {
            Player::Script(s) => s.answer(conv),
            Player::Heuristic => heuristic::answer(conv),
        };
        (turn, "turn")
    }

    /// The full reply to a Messages API request body of `body_len` bytes.
    #[must_use]
    pub fn reply(&self, body: &Value, body_len: usize) -> (Reply, &'static str) {
        let conv = api::conversation(body);
        let (turn, kind) = self.turn(&conv);
        (
            Reply::build(&turn, conv.assistant_turns, body, body_len),
            kind,
        )
    }

    /// The full response to a Responses API request body of `body_len` bytes.
    #[must_use]
    pub fn respond(&self, body: &Value, body_len: usize) -> (responses::Response, &'static str) {
        let conv = responses::conversation(body);
        let (turn, kind) = self.turn(&conv);
        (
            responses::Response::build(&turn, conv.assistant_turns, body, body_len),
            kind,
        )
    }
}

struct Shared {
    player: Player,
    transcript: Option<Mutex<File>>,
    seq: AtomicU64,
    quiet: bool,
    /// [`Limit::ReplayBodyBytes`] in force.
    body_cap: u64,
    /// Think time before each model answer.
    latency: std::time::Duration,
}

impl Shared {
    /// The request body as JSON, or the refusal already recorded and shaped for the wire.
    fn accept(
        &self,
        uri: &Uri,
        bytes: &Result<Bytes, BytesRejection>,
        shape: ErrorShape,
    ) -> Result<Value, Box<Response>> {
        parse_body(bytes, self.body_cap).map_err(|refusal| {
            let response = refusal.into_response(shape);
            let outcome = format!("{} refused", response.status().as_u16());
            self.record(json!({"method": "POST", "path": uri.to_string(), "outcome": outcome}));
            Box::new(response)
        })
    }

    fn record(&self, entry: Value) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let get = |k: &str| entry.get(k).cloned().unwrap_or(Value::Null);
        let line = format!(
            "replay-model: #{seq} {} {} model={} messages={} -> {}",
            get("method").as_str().unwrap_or(""),
            get("path").as_str().unwrap_or(""),
            get("model").as_str().unwrap_or("-"),
            get("messages"),
            get("outcome").as_str().unwrap_or(""),
        );
        if self.quiet {
            tracing::info!(target: "anvil_bench::replay", "{line}");
        } else {
            // SIGPIPE is ignored while serving: a stderr nobody reads is EPIPE, which
            // `eprintln!` would turn into a panic of the request's handler.
            let _ = writeln!(std::io::stderr(), "{line}");
        }
        if let Some(file) = &self.transcript {
            let mut line = json!({"seq": seq});
            if let (Value::Object(dst), Value::Object(src)) = (&mut line, entry) {
                dst.extend(src);
            }
            if let Ok(mut f) = file.lock() {
                let _ = writeln!(f, "{line}");
                let _ = f.flush();
            }
        }
    }
}

/// Options of one server.
#[derive(Debug, Default)]
pub struct ServeOptions {
    /// Append every request and answer to this JSONL file.
    pub transcript: Option<std::path::PathBuf>,
    /// Log requests through `tracing` (target `anvil_bench::replay`) instead of stderr.
    pub quiet: bool,
    /// Think time added before each model answer, to measure harness overhead against a
    /// latency-bound agent.
    pub latency: std::time::Duration,
}

/// The router, for tests and embedding. A request body over [`Limit::ReplayBodyBytes`] gets
/// a 413 naming the cap.
///
/// # Errors
///
/// An invalid `ANVIL_MAX_REPLAY_BODY_BYTES` override, or a transcript file that cannot be
/// opened for appending.
pub fn router(player: Player, options: &ServeOptions) -> std::io::Result<Router> {
    let body_cap = Limit::ReplayBodyBytes
        .value()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let transcript = match &options.transcript {
        Some(path) => Some(Mutex::new(open_transcript(path)?)),
        None => None,
    };
    let shared = Arc::new(Shared {
        player,
        transcript,
        seq: AtomicU64::new(0),
        quiet: options.quiet,
        body_cap,
        latency: options.latency,
    });
    Ok(Router::new()
        .route("/v1/messages", post(messages))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route("/v1/responses", post(responses_endpoint))
        .route("/v1/models", get(models))
        .fallback(fallback)
        .layer(DefaultBodyLimit::max(
            usize::try_from(body_cap).unwrap_or(usize::MAX),
        ))
        .with_state(shared))
}

/// Opens the transcript for appending: a new file or an existing regular one, never through
/// a symlink (see [`crate::outpath`]).
fn open_transcript(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    crate::outpath::check_file(path)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            let message = format!("cannot open the transcript `{}`: {e}", path.display());
            std::io::Error::new(e.kind(), message)
        })
}

/// Serves on `listener` until `shutdown` resolves; connections still open two seconds
/// later are dropped.
///
/// # Errors
///
/// An I/O error of the listener.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let mut rx2 = rx.clone();
    tokio::spawn(async move {
        shutdown.await;
        let _ = tx.send(true);
    });
    let graceful = async move {
        let mut rx = rx;
        let _ = rx.wait_for(|v| *v).await;
    };
    let server = axum::serve(listener, router).with_graceful_shutdown(graceful);
    tokio::select! {
        r = server => r,
        () = async move {
            let _ = rx2.wait_for(|v| *v).await;
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        } => Ok(()),
    }
}

/// Why a request body was not played.
enum BodyRefusal {
    /// Over [`Limit::ReplayBodyBytes`] (the cap in force): 413.
    TooLarge(u64),
    /// Unreadable or not JSON: 400.
    Bad(String),
}

/// An API error body in one wire's shape: `(kind, message)`.
type ErrorShape = fn(&str, &str) -> Value;

impl BodyRefusal {
    fn into_response(self, shape: ErrorShape) -> Response {
        let (status, kind, message) = match self {
            BodyRefusal::TooLarge(cap) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                format!(
                    "request body {}",
                    Limit::ReplayBodyBytes.exceeded(cap, None)
                ),
            ),
            BodyRefusal::Bad(message) => {
                (StatusCode::BAD_REQUEST, "invalid_request_error", message)
            }
        };
        (status, axum::Json(shape(kind, &message))).into_response()
    }
}

/// The body as JSON, or why it is refused.
fn parse_body(body: &Result<Bytes, BytesRejection>, cap: u64) -> Result<Value, BodyRefusal> {
    let bytes = match body {
        Ok(bytes) => bytes,
        Err(r) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return Err(BodyRefusal::TooLarge(cap));
        }
        Err(r) => {
            return Err(BodyRefusal::Bad(format!(
                "cannot read the request body: {r}"
            )));
        }
    };
    serde_json::from_slice::<Value>(bytes)
        .map_err(|e| BodyRefusal::Bad(format!("request body is not JSON: {e}")))
}

/// `entry` with the request body moved in as `request`. `json!` would serialise a copy of
/// the body, which for a large request is several times its size again.
fn with_request(mut entry: Value, body: Value) -> Value {
    if let Value::Object(map) = &mut entry {
        map.insert("request".into(), body);
    }
    entry
}

/// The model, the number of messages (or input items) and whether to stream.
fn summary(body: &Value) -> (Value, usize, bool) {
    let model = body.get("model").cloned().unwrap_or(Value::Null);
    let n = ["messages", "input"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_array))
        .map_or(0, Vec::len);
    let stream = body.get("stream").and_then(Value::as_bool) == Some(true);
    (model, n, stream)
}

async fn messages(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match shared.accept(&uri, &bytes, error_json) {
        Ok(b) => b,
        Err(response) => return *response,
    };
    let len = bytes.map_or(0, |b| b.len());
    if !shared.latency.is_zero() {
        tokio::time::sleep(shared.latency).await;
    }
    let (model, n, stream) = summary(&body);
    let (reply, kind) = shared.player.reply(&body, len);
    let message = reply.message_json();
    let entry = json!({
        "method": "POST", "path": uri.to_string(), "kind": kind, "model": model, "messages": n,
        "stream": stream, "outcome": format!("{kind} {} ({} blocks)", reply.stop_reason, reply.content.len()),
        "response": message,
    });
    shared.record(with_request(entry, body));
    if stream {
        sse_response(&reply)
    } else {
        axum::Json(message).into_response()
    }
}

async fn responses_endpoint(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match shared.accept(&uri, &bytes, responses::error_json) {
        Ok(b) => b,
        Err(response) => return *response,
    };
    let len = bytes.map_or(0, |b| b.len());
    if !shared.latency.is_zero() {
        tokio::time::sleep(shared.latency).await;
    }
    let (model, n, stream) = summary(&body);
    let (response, kind) = shared.player.respond(&body, len);
    let object = response.json();
    let ending = if response.calls_tools() {
        "function_call"
    } else {
        "completed"
    };
    let entry = json!({
        "method": "POST", "path": uri.to_string(), "kind": kind, "model": model, "messages": n,
        "stream": stream, "outcome": format!("{kind} {ending} ({} items)", response.output.len()),
        "response": object,
    });
    shared.record(with_request(entry, body));
    if stream {
        sse(response.sse_events())
    } else {
        axum::Json(object).into_response()
    }
}

/// `GET /v1/models`: the one model there is, in the OpenAI list shape.
async fn models(State(shared): State<Arc<Shared>>, uri: Uri) -> Response {
    shared.record(json!({
        "method": "GET", "path": uri.to_string(), "kind": "models", "outcome": "200 models",
    }));
    axum::Json(json!({"object": "list", "data": [
        {"id": "replay", "object": "model", "created": 0, "owned_by": "anvil-bench"}
    ]}))
    .into_response()
}

/// The streaming response: the reply's events, framed by axum's SSE support.
#[must_use]
pub fn sse_response(reply: &Reply) -> Response {
    sse(reply.sse_events())
}

/// Named events, framed as server-sent events (`event:` then `data:` then a blank line).
fn sse(events: Vec<(&'static str, Value)>) -> Response {
    let events: Vec<Result<Event, Infallible>> = events
        .into_iter()
        .map(|(name, data)| Ok(Event::default().event(name).data(data.to_string())))
        .collect();
    Sse::new(futures_util::stream::iter(events)).into_response()
}

async fn count_tokens(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match parse_body(&bytes, shared.body_cap) {
        Ok(b) => b,
        Err(refusal) => return refusal.into_response(error_json),
    };
    let len = bytes.map_or(0, |b| b.len());
    let (model, n, _) = summary(&body);
    let tokens = (len as u64).div_ceil(4).max(1);
    let entry = json!({
        "method": "POST", "path": uri.to_string(), "kind": "count_tokens", "model": model,
        "messages": n, "outcome": format!("count_tokens {tokens}"),
    });
    shared.record(with_request(entry, body));
    axum::Json(json!({"input_tokens": tokens})).into_response()
}

async fn fallback(State(shared): State<Arc<Shared>>, method: Method, uri: Uri) -> Response {
    let ok = method == Method::GET || method == Method::HEAD;
    shared.record(json!({
        "method": method.as_str(), "path": uri.to_string(), "kind": "other",
        "outcome": if ok { "200 probe" } else { "404" },
    }));
    if ok {
        axum::Json(json!({})).into_response()
    } else {
        let message = format!("replay-model does not serve {method} {}", uri.path());
        (
            StatusCode::NOT_FOUND,
            axum::Json(error_json("not_found_error", &message)),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conversation::Block;

    /// `--latency-ms`: an answer comes no sooner than the think time (a lower bound only,
    /// so a loaded machine cannot make it flaky).
    #[tokio::test]
    async fn latency_delays_each_model_answer() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let options = ServeOptions {
            latency: std::time::Duration::from_millis(150),
            quiet: true,
            ..ServeOptions::default()
        };
        let app = router(Player::Heuristic, &options).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, app, std::future::pending()));
        let body =
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).to_string();
        let request = format!(
            "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let started = std::time::Instant::now();
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await.unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    }

    #[tokio::test]
    async fn sse_framing_is_event_then_data_then_a_blank_line() {
        let turn = Turn {
            blocks: vec![
                Block::Text("line one\nline two".into()),
                Block::ToolUse {
                    name: "Bash".into(),
                    input: json!({"command": "pwd"}),
                },
            ],
        };
        let body = json!({"model": "m", "messages": [], "tools": [{"name": "Bash"}]});
        let reply = Reply::build(&turn, 0, &body, 10);
        let resp = sse_response(&reply);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let frames: Vec<&str> = text.split_terminator("\n\n").collect();
        let expected = reply.sse_events();
        assert_eq!(frames.len(), expected.len(), "{text}");
        for (frame, (name, data)) in frames.iter().zip(&expected) {
            let lines: Vec<&str> = frame.lines().collect();
            assert_eq!(lines, [format!("event: {name}"), format!("data: {data}")]);
        }
        // A newline inside text is escaped by JSON, so it never splits a data line.
        assert!(text.contains(r"line one\nline two"));
    }

    #[test]
    fn side_calls_without_tools_get_a_short_text_reply() {
        let body = json!({"model": "small", "max_tokens": 1, "messages": [{"role": "user", "content": "quota"}]});
        let (reply, kind) = Player::Heuristic.reply(&body, 80);
        assert_eq!(kind, "auxiliary");
        assert_eq!(reply.stop_reason, "end_turn");
        assert_eq!(reply.model, "small");
    }
}
