//! `replay-model` on the `OpenAI` Responses wire, end to end: the real `codex` binary runs a
//! whole case against `replay-model --policy heuristic` on loopback (no network, no key),
//! directly and through `case investigate --driver codex` natively and under bubblewrap; the
//! heuristic policy closes every demo case through a simulated Codex; the server's own
//! Responses surface (JSON, SSE, `/v1/models`, errors in the API's shape).
//!
//! The `codex` tests need `codex` on PATH (npm i -g @openai/codex): without it they fail
//! when CI=true and otherwise print why they skipped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anvil_bench::replay::Player;
use serde_json::{Value, json};

mod common;

use common::{BIN, Server, find_on_path, open_case, result_of, tools_or_skip};

/// The `-c` overrides that point Codex at a Responses provider at `url`.
fn provider(url: &str) -> Vec<String> {
    [
        "model_provider=\"replay\"".to_string(),
        "model_providers.replay.name=\"replay\"".into(),
        format!("model_providers.replay.base_url=\"{url}/v1\""),
        "model_providers.replay.wire_api=\"responses\"".into(),
        "model_providers.replay.env_key=\"OPENAI_API_KEY\"".into(),
    ]
    .into_iter()
    .flat_map(|c| ["-c".to_string(), c])
    .collect()
}

#[test]
fn codex_runs_the_heuristic_investigation_to_proposal_generated() {
    let Some(codex) = find_on_path("codex") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`codex` is not on PATH; install it with npm i -g @openai/codex"
        );
        eprintln!("skipped: `codex` is not on PATH (npm i -g @openai/codex)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let run = open_case(
        dir,
        "annotate-unit",
        "op.create_payment.input.body.capture_timeout",
    );
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let transcript = dir.join("transcript.jsonl");
    let server = Server::start(&[
        "--policy",
        "heuristic",
        "--transcript",
        transcript.to_str().unwrap(),
    ]);
    let prompt = std::fs::read_to_string(run.join("CASE.md")).unwrap();
    let path = std::env::join_paths([
        Path::new(BIN).parent().unwrap(),
        codex.parent().unwrap(),
        Path::new("/usr/local/bin"),
        Path::new("/usr/bin"),
        Path::new("/bin"),
    ])
    .unwrap();
    let mut child = Command::new(&codex)
        .args(["exec", "--json", "--skip-git-repo-check", "--ephemeral"])
        .args(["--ignore-user-config", "--sandbox", "danger-full-access"])
        .args(["-m", "replay"])
        .args(provider(&server.url))
        .arg("--")
        .arg(&prompt)
        .current_dir(&run)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("LANG", "C.UTF-8")
        .env("OPENAI_API_KEY", "sk-replay-not-a-key")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let deadline = Instant::now() + Duration::from_mins(4);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("codex did not finish within 240 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = reader.join().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "codex failed ({status}): {err}\n{out}");
    assert!(server.stop().success());

    let result = result_of(&run);
    assert_eq!(result["status"], "proposal_generated", "{result:#}\n{out}");
    assert_eq!(result["patch"]["unit"], "s");
    let events: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let done = events
        .iter()
        .rev()
        .find(|e| e["type"] == "turn.completed")
        .expect("a turn.completed event");
    for key in ["input_tokens", "cached_input_tokens", "output_tokens"] {
        assert!(
            done["usage"][key].as_u64().unwrap() > 0,
            "usage.{key}: {done}"
        );
    }
    // Every shell call ran and succeeded: the rails, grep and the proposal's heredoc.
    let commands: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .map(|e| &e["item"])
        .collect();
    assert!(commands.len() >= 8, "{out}");
    assert!(commands.iter().all(|c| c["exit_code"] == 0), "{out}");
    let logged = std::fs::read_to_string(&transcript).unwrap();
    let posts: Vec<Value> = logged
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["path"] == "/v1/responses")
        .collect();
    assert!(posts.len() >= 8, "{logged}");
    assert!(
        posts
            .iter()
            .all(|p| p["stream"] == true && p["kind"] == "turn")
    );
}

/// Codex's output for a shell command: its execution header, then what the command printed.
fn codex_output(code: i32, text: &str) -> String {
    format!(
        "Chunk ID: 1a2b3c\nWall time: 0.0100 seconds\nProcess exited with code {code}\nOriginal token count: {}\nOutput:\n{text}",
        text.len() / 4
    )
}

/// Plays the client side of the Responses tool loop in process, as `codex exec` shapes it:
/// the environment and the brief as input messages, `exec_command` run in the run
/// directory, each response's items sent back followed by their outputs in completion
/// order.
fn simulate_codex(run: &Path, prompt: &str) -> Vec<Value> {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let text = |role: &str, t: String| json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": t}]});
    let mut input = vec![
        text("developer", "You are Codex.".into()),
        text(
            "user",
            format!(
                "<environment_context>\n  <cwd>{}</cwd>\n</environment_context>",
                run.display()
            ),
        ),
        text("user", prompt.to_string()),
    ];
    let tools = json!([
        {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
        {"type": "function", "name": "write_stdin", "parameters": {"type": "object"}},
        {"type": "web_search", "external_web_access": false}
    ]);
    for _ in 0..30 {
        let body = json!({"model": "replay", "stream": true, "tools": tools, "input": input});
        let (response, kind) = Player::Heuristic.respond(&body, body.to_string().len());
        assert_eq!(kind, "turn");
        input.extend(response.output.iter().cloned());
        if !response.calls_tools() {
            return input;
        }
        let mut outputs = Vec::new();
        for call in response
            .output
            .iter()
            .filter(|i| i["type"] == "function_call")
        {
            assert_eq!(call["name"], "exec_command", "{call}");
            let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
            assert_eq!(args["login"], false, "a login shell would reset PATH");
            let out = Command::new("bash")
                .args(["-c", args["cmd"].as_str().unwrap()])
                .current_dir(run)
                .env("PATH", &path)
                .output()
                .unwrap();
            let printed = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let output = codex_output(out.status.code().unwrap_or(-1), &printed);
            outputs.push(json!({"type": "function_call_output", "call_id": call["call_id"], "output": output}));
        }
        outputs.reverse();
        input.extend(outputs);
    }
    panic!("the policy did not end within 30 turns");
}

#[test]
fn the_heuristic_policy_closes_every_demo_case_through_a_simulated_codex() {
    let cases: &[(&str, &str, &str, Value)] = &[
        (
            "annotate-unit",
            "op.create_payment.input.body.capture_timeout",
            "unit",
            json!("s"),
        ),
        (
            "enrich-error",
            "op.create_payment.error.CARD_DECLINED",
            "retryable",
            json!(false),
        ),
        (
            "enrich-error",
            "op.create_payment.error.RATE_LIMITED",
            "retryable",
            json!(true),
        ),
        (
            "classify-sensitivity",
            "op.create_payment.input.body.customer_email",
            "sensitivity",
            json!("pii"),
        ),
        (
            "describe-field",
            "op.create_payment.output.body.payment_id",
            "description",
            json!("GET /payments/{payment_id} returns the payment created by POST /payments."),
        ),
        (
            "describe-operation",
            "op.get_payment",
            "description",
            json!("GET /payments/{payment_id} returns the payment created by POST /payments."),
        ),
    ];
    for (skill, target, field, expected) in cases {
        let tmp = tempfile::tempdir().unwrap();
        anvil_bench::demo::write_example(tmp.path()).unwrap();
        let run = open_case(tmp.path(), skill, target);
        let prompt = std::fs::read_to_string(run.join("CASE.md")).unwrap();
        let input = simulate_codex(&run, &prompt);
        let last = &input.last().unwrap()["content"][0]["text"];
        let result = result_of(&run);
        assert_eq!(result["status"], "proposal_generated", "{target}: {last}");
        assert_eq!(&result["patch"][field], expected, "{target}");
    }
}

fn http(url: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // HTTP/1.0: a streamed body comes whole, unchunked, ended by the connection's close.
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn the_server_answers_responses_as_json_and_as_events_and_lists_its_model() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"format": "anvil-replay-script", "formatVersion": 1, "turns": [
            {"content": [{"type": "text", "text": "Looking."},
                         {"type": "tool_use", "name": "mcp__anvil__show", "input": {}}]},
            {"content": [{"type": "text", "text": "it said {{result.0}}"}]}]}"#,
    )
    .unwrap();
    let server = Server::start(&["--script", script.to_str().unwrap()]);
    let tools = json!([{"type": "namespace", "name": "mcp__anvil", "tools": [
        {"type": "function", "name": "show", "parameters": {}}]}]);
    let ask = |input: Value, stream: bool| {
        let body = json!({"model": "replay", "stream": stream, "tools": tools, "input": input})
            .to_string();
        let (status, text) = http(&server.url, "POST", "/v1/responses", &body);
        assert_eq!(status, 200, "{text}");
        text
    };
    let go = json!([{"type": "message", "role": "user", "content": "go"}]);
    let one: Value = serde_json::from_str(&ask(go.clone(), false)).unwrap();
    assert_eq!(one["object"], "response");
    assert_eq!(one["status"], "completed");
    let call = &one["output"][1];
    assert_eq!(
        (&call["type"], &call["namespace"], &call["name"]),
        (
            &json!("function_call"),
            &json!("mcp__anvil"),
            &json!("show")
        )
    );
    assert!(one["usage"]["input_tokens"].as_u64().unwrap() > 0);

    // Streamed: the same response, as named events ending in response.completed.
    let events = ask(go.clone(), true);
    let frames: Vec<(&str, Value)> = events
        .split_terminator("\n\n")
        .map(|frame| {
            let mut lines = frame.lines();
            let name = lines.next().unwrap().strip_prefix("event: ").unwrap();
            let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
            (name, serde_json::from_str(data).unwrap())
        })
        .collect();
    assert_eq!(frames[0].0, "response.created");
    let (last, completed) = frames.last().unwrap();
    assert_eq!(*last, "response.completed");
    assert_eq!(completed["response"], one);

    let history = json!([
        {"type": "message", "role": "user", "content": "go"},
        one["output"][0], call,
        {"type": "function_call_output", "call_id": call["call_id"], "output": [
            {"type": "input_text", "text": "Wall time: 0.01 seconds\nOutput:"},
            {"type": "input_text", "text": "open"}]}
    ]);
    let two: Value = serde_json::from_str(&ask(history.clone(), false)).unwrap();
    assert_eq!(two["output"][0]["content"][0]["text"], "it said open");
    assert_eq!(two["output"].as_array().unwrap().len(), 1);
    let again: Value = serde_json::from_str(&ask(history, false)).unwrap();
    assert_eq!(again, two, "a retried request gets the same answer");

    let (status, text) = http(&server.url, "GET", "/v1/models", "");
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["data"][0]["id"],
        "replay"
    );
    let (status, text) = http(&server.url, "POST", "/v1/responses", "not json");
    assert_eq!(status, 400);
    let error = &serde_json::from_str::<Value>(&text).unwrap()["error"];
    assert_eq!(error["type"], "invalid_request_error", "{text}");
    assert!(server.stop().success());
}

/// The fields every agent's execution.json carries, and those of its usage.
const EXECUTION_FIELDS: [&str; 12] = [
    "attestation",
    "backend",
    "connections",
    "driver",
    "format",
    "formatVersion",
    "record",
    "repositoryAfter",
    "repositoryBefore",
    "transcript",
    "usage",
    "violation",
];
const USAGE_FIELDS: [&str; 9] = [
    "cacheCreationInputTokens",
    "cacheReadInputTokens",
    "complete",
    "durationMs",
    "inputTokens",
    "numTurns",
    "outputTokens",
    "sessionId",
    "totalCostUsd",
];

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

/// `case investigate --driver codex` against the heuristic replay model.
fn investigate_with_codex(tools: &str, backend: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let run = open_case(dir, "enrich-error", "op.create_payment.error.RATE_LIMITED");
    let server = Server::start(&["--policy", "heuristic"]);
    let out = Command::new(BIN)
        .args(["case", "investigate"])
        .arg(&run)
        .args(["--driver", "codex", "--model", "replay", "--tools", tools])
        .args(["--timeout", "300", "--json"])
        .args(backend)
        .current_dir(dir)
        .env("OPENAI_BASE_URL", &server.url)
        .env("OPENAI_API_KEY", "sk-replay-not-a-key")
        .env_remove("ANVIL_CODEX_USD_PER_MTOK")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "investigate exited {:?}: {}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "proposal_generated", "{report:#}");
    assert_eq!(report["state"], "finalized");
    assert_eq!(result_of(&run)["patch"]["retryable"], true);
    let exec: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("execution.json")).unwrap())
            .unwrap();
    // The same record a Claude Code run leaves.
    assert_eq!(keys(&exec), EXECUTION_FIELDS);
    assert_eq!(keys(&exec["usage"]), USAGE_FIELDS);
    assert_eq!(exec["driver"], "codex");
    let u = &exec["usage"];
    for key in [
        "inputTokens",
        "outputTokens",
        "cacheReadInputTokens",
        "numTurns",
    ] {
        assert!(u[key].as_u64().is_some_and(|n| n > 0), "usage.{key}: {u}");
    }
    assert!(u["totalCostUsd"].as_f64().is_some_and(|c| c > 0.0), "{u}");
    assert!(u["sessionId"].is_string() && u["complete"] == true, "{u}");
    let transcript = exec["transcript"].as_array().unwrap();
    let calls: Vec<&str> = transcript
        .iter()
        .filter(|e| e["kind"] == "tool_call")
        .filter_map(|e| e["name"].as_str())
        .collect();
    let rail = if tools == "mcp" {
        "mcp__anvil__finalize"
    } else {
        "exec_command"
    };
    assert!(calls.contains(&rail), "no {rail} in {calls:?}");
    assert!(
        transcript
            .iter()
            .filter(|e| e["kind"] == "tool_result")
            .all(|e| e["is_error"] == false),
        "a tool call failed: {transcript:#?}"
    );
    assert!(exec["record"]["startedAt"].is_string() && exec["record"]["endedAt"].is_string());
    assert!(exec["violation"].is_null());
    server.stop();
}

#[test]
fn investigate_runs_codex_under_bubblewrap_through_the_mcp_rails() {
    if tools_or_skip(&["codex", "bwrap"]) {
        investigate_with_codex("mcp", &["--backend", "bubblewrap"]);
    }
}

#[test]
fn investigate_runs_codex_natively_in_its_own_sandbox_through_its_shell() {
    if tools_or_skip(&["codex"]) {
        investigate_with_codex("bash", &["--backend", "native", "--allow-degraded-native"]);
    }
}
