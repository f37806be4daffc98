//! `replay-model` end to end: the real `claude` binary runs a whole case against
//! `replay-model --policy heuristic` on loopback (no network, no key); the heuristic policy
//! closes every demo case through a simulated client; the server's own surface (listening
//! line, JSON replies, `count_tokens`, 404s, stdin-EOF shutdown).
//!
//! The `claude` test needs `claude` on PATH (npm i -g @anthropic-ai/claude-code): without it
//! the test fails when CI=true and otherwise prints why it skipped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anvil_bench::replay::Player;
use serde_json::{Value, json};

mod common;

use common::{BIN, Server, find_on_path, open_case, result_of, tools_or_skip};

#[test]
fn claude_runs_the_heuristic_investigation_to_proposal_generated() {
    let Some(claude) = find_on_path("claude") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`claude` is not on PATH; install it with npm i -g @anthropic-ai/claude-code"
        );
        eprintln!("skipped: `claude` is not on PATH (npm i -g @anthropic-ai/claude-code)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let target = "op.create_payment.input.body.capture_timeout";
    let run = open_case(dir, "annotate-unit", target);
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
    let bin_dir = Path::new(BIN).parent().unwrap();
    let claude_dir = claude.parent().unwrap();
    let path = std::env::join_paths([
        bin_dir,
        claude_dir,
        Path::new("/usr/local/bin"),
        Path::new("/usr/bin"),
        Path::new("/bin"),
    ])
    .unwrap();
    let repo = dir.join("repo");
    let mut child = Command::new(&claude)
        .arg("-p")
        .arg(&prompt)
        .args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
        ])
        .args(["--max-turns", "30", "--add-dir"])
        .arg(&repo)
        .args([
            "--allowedTools",
            "Bash(anvil-bench:*)",
            "Bash(grep:*)",
            "Read",
            "Grep",
            "Glob",
            "Write",
        ])
        .current_dir(&run)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("LANG", "C.UTF-8")
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "sk-replay-not-a-key")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
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
            panic!("claude did not finish within 240 s");
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
    assert!(status.success(), "claude failed ({status}): {err}\n{out}");
    assert!(server.stop().success());

    let result = result_of(&run);
    assert_eq!(result["status"], "proposal_generated", "{result:#}\n{out}");
    let proposal: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("output/proposal.json")).unwrap())
            .unwrap();
    assert_eq!(proposal["patch"]["set"]["unit"], "s");

    let events: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let last = events
        .iter()
        .rev()
        .find(|e| e["type"] == "result")
        .expect("a result event");
    assert_eq!(last["subtype"], "success", "{last:#}");
    assert!(last["total_cost_usd"].as_f64().unwrap() > 0.0, "{last:#}");
    for key in [
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ] {
        assert!(
            last["usage"][key].as_u64().unwrap() > 0,
            "usage.{key}: {last:#}"
        );
    }
    assert!(last["num_turns"].as_u64().unwrap() >= 8, "{last:#}");
    // Every tool call the policy made went through: no permission denials.
    assert_eq!(last["permission_denials"], json!([]), "{last:#}");
    let logged = std::fs::read_to_string(&transcript).unwrap();
    assert!(logged.lines().count() >= 8, "{logged}");
}

/// Plays the client side of the tool loop in-process: runs Bash in the run directory,
/// reads and writes files, and feeds results back exactly as Claude Code shapes them.
fn simulate(run: &Path, prompt: &str, refuse: Option<&str>) -> Vec<Value> {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut messages = vec![
        json!({"role": "user", "content": [{"type": "text", "text": prompt}]}),
        json!({"role": "system", "content": format!("Primary working directory: {}", run.display())}),
    ];
    let tools = json!([{"name": "Bash"}, {"name": "Read"}, {"name": "Write"}]);
    for _ in 0..30 {
        let body = json!({"model": "m", "stream": false, "tools": tools, "messages": messages});
        let (reply, _) = Player::Heuristic.reply(&body, body.to_string().len());
        messages.push(json!({"role": "assistant", "content": reply.content}));
        if reply.stop_reason == "end_turn" {
            return messages;
        }
        let mut results = Vec::new();
        for block in reply.content.iter().filter(|b| b["type"] == "tool_use") {
            let input = &block["input"];
            let (text, is_error) = match block["name"].as_str().unwrap() {
                "Bash"
                    if refuse.is_some_and(|r| input["command"].as_str().unwrap().contains(r)) =>
                {
                    ("Exit code 1\nerror: refused by the test".to_string(), true)
                }
                "Bash" => {
                    let command = input["command"].as_str().unwrap();
                    let out = Command::new("sh")
                        .args(["-c", command])
                        .current_dir(run)
                        .env("PATH", &path)
                        .output()
                        .unwrap();
                    let text = format!(
                        "{}{}",
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let code = out.status.code().unwrap_or(-1);
                    match code {
                        0 => (text.trim_end().to_string(), false),
                        1 if command.starts_with("grep") => {
                            ("(Bash completed with no output)".into(), false)
                        }
                        _ => (format!("Exit code {code}\n{}", text.trim_end()), true),
                    }
                }
                "Read" => {
                    let text =
                        std::fs::read_to_string(input["file_path"].as_str().unwrap()).unwrap();
                    let offset = input["offset"].as_u64().unwrap_or(1) as usize;
                    let limit = input["limit"].as_u64().unwrap_or(2000) as usize;
                    // Like Claude Code: split on '\n', so a final newline shows an empty
                    // line past the end of the file.
                    let lines: Vec<String> = text
                        .split('\n')
                        .enumerate()
                        .skip(offset - 1)
                        .take(limit)
                        .map(|(i, l)| format!("{}\t{l}", i + 1))
                        .collect();
                    (lines.join("\n"), false)
                }
                "Write" => {
                    std::fs::write(
                        input["file_path"].as_str().unwrap(),
                        input["content"].as_str().unwrap(),
                    )
                    .unwrap();
                    ("File created successfully".into(), false)
                }
                other => panic!("unexpected tool {other}"),
            };
            results.push(json!({"type": "tool_result", "tool_use_id": block["id"], "content": text, "is_error": is_error}));
        }
        // Completion order, not call order: the policy must match results by id.
        results.reverse();
        messages.push(json!({"role": "user", "content": results}));
    }
    panic!("the policy did not end within 30 turns");
}

#[test]
fn the_heuristic_policy_closes_every_demo_case_through_a_simulated_client() {
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
        let transcript = simulate(&run, &prompt, None);
        let result = result_of(&run);
        let last = &transcript.last().unwrap()["content"][0]["text"];
        assert_eq!(result["status"], "proposal_generated", "{target}: {last}");
        let proposal: Value = serde_json::from_str(
            &std::fs::read_to_string(run.join("output/proposal.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(&proposal["patch"]["set"][field], expected, "{target}");
    }
}

#[test]
fn a_case_with_nothing_to_find_is_declined_honestly() {
    let tmp = tempfile::tempdir().unwrap();
    anvil_bench::demo::write_example(tmp.path()).unwrap();
    // Remove every mention of the target so the search comes back empty.
    for file in [
        "src/payments/service.py",
        "tests/test_capture.py",
        "docs/payments.md",
    ] {
        let p = tmp.path().join("repo").join(file);
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("capture_timeout", "window");
        std::fs::write(p, text).unwrap();
    }
    let run = open_case(
        tmp.path(),
        "annotate-unit",
        "op.create_payment.input.body.capture_timeout",
    );
    let prompt = std::fs::read_to_string(run.join("CASE.md")).unwrap();
    simulate(&run, &prompt, None);
    let result = result_of(&run);
    assert_eq!(result["status"], "insufficient_evidence", "{result:#}");
}

#[test]
fn a_refused_rail_is_declined_honestly_not_retried() {
    let tmp = tempfile::tempdir().unwrap();
    anvil_bench::demo::write_example(tmp.path()).unwrap();
    let run = open_case(
        tmp.path(),
        "enrich-error",
        "op.create_payment.error.RATE_LIMITED",
    );
    let prompt = std::fs::read_to_string(run.join("CASE.md")).unwrap();
    let transcript = simulate(&run, &prompt, Some("case add-claim"));
    let result = result_of(&run);
    assert_eq!(result["status"], "insufficient_evidence", "{result:#}");
    assert!(
        result.to_string().contains("add-claim failed"),
        "{result:#}"
    );
    let claims = transcript
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| {
            b["input"]["command"]
                .as_str()
                .is_some_and(|c| c.contains("case add-claim"))
        })
        .count();
    assert_eq!(claims, 1, "the refused rail is not retried");
}

#[test]
fn sources_that_disagree_are_both_claimed_and_finalized_conflicted_through_bash() {
    let tmp = tempfile::tempdir().unwrap();
    anvil_bench::demo::write_example(tmp.path()).unwrap();
    // The test now says milliseconds where the implementation says seconds.
    std::fs::write(
        tmp.path().join("repo/tests/test_capture.py"),
        "def test_capture_timeout_is_milliseconds():\n    request = CreatePayment(amount=1000, currency=\"EUR\", capture_timeout=45000)\n    assert capture_window(request) == timedelta(milliseconds=45000)\n",
    )
    .unwrap();
    let run = open_case(
        tmp.path(),
        "annotate-unit",
        "op.create_payment.input.body.capture_timeout",
    );
    let prompt = std::fs::read_to_string(run.join("CASE.md")).unwrap();
    simulate(&run, &prompt, None);
    let result = result_of(&run);
    assert_eq!(result["status"], "conflicted", "{result:#}");
    assert_eq!(result["claims"].as_array().unwrap().len(), 2, "{result:#}");
    assert!(!run.join("output/proposal.json").exists());
}

fn http(url: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
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
fn the_server_answers_json_count_tokens_and_probes_and_stops_when_stdin_closes() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"format": "anvil-replay-script", "formatVersion": 1, "turns": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo hi"}}]},
            {"content": [{"type": "text", "text": "it said {{result.0}}"}]}]}"#,
    )
    .unwrap();
    let server = Server::start(&["--script", script.to_str().unwrap(), "--json"]);
    let first: Value = serde_json::from_str(&server.first_line).unwrap();
    assert_eq!(first["format"], "anvil-replay-listening");

    let tools = json!([{"name": "Bash"}]);
    let ask = |messages: Value| {
        let body = json!({"model": "m", "max_tokens": 100, "tools": tools, "messages": messages})
            .to_string();
        let (status, text) = http(&server.url, "POST", "/v1/messages?beta=true", &body);
        assert_eq!(status, 200, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()
    };
    let one = ask(json!([{"role": "user", "content": "go"}]));
    assert_eq!(one["stop_reason"], "tool_use");
    assert_eq!(one["content"][0]["input"]["command"], "echo hi");
    assert!(one["usage"]["input_tokens"].as_u64().unwrap() > 0);
    let id = one["content"][0]["id"].clone();
    let history = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": one["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "hi"}]}
    ]);
    let two = ask(history.clone());
    assert_eq!(two["content"][0]["text"], "it said hi");
    assert_eq!(two["stop_reason"], "end_turn");
    assert_eq!(ask(history), two, "a retried request gets the same answer");

    let (status, text) = http(
        &server.url,
        "POST",
        "/v1/messages/count_tokens",
        r#"{"model": "m", "messages": []}"#,
    );
    assert_eq!(status, 200);
    assert!(
        serde_json::from_str::<Value>(&text).unwrap()["input_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(http(&server.url, "HEAD", "/api/hello", "").0, 200);
    let (status, text) = http(&server.url, "POST", "/v1/complete", "{}");
    assert_eq!(status, 404);
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["type"],
        "error"
    );
    let (status, _) = http(&server.url, "POST", "/v1/messages", "not json");
    assert_eq!(status, 400);

    assert!(server.stop().success());
}

#[test]
fn a_script_with_an_unknown_field_is_refused_with_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"format": "anvil-replay-script", "formatVersion": 1, "turns": [{"content": [{"type": "text", "text": "x", "extra": 1}]}]}"#,
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["replay-model", "--script"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("turns[0].content[0].extra"), "{err}");
}

/// `case investigate --driver claude-code` against the heuristic replay model.
fn investigate_with_claude(backend: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let run = open_case(
        dir,
        "annotate-unit",
        "op.create_payment.input.body.capture_timeout",
    );
    let server = Server::start(&["--policy", "heuristic"]);
    let out = Command::new(BIN)
        .args(["case", "investigate"])
        .arg(&run)
        .args([
            "--driver",
            "claude-code",
            "--tools",
            "bash",
            "--max-turns",
            "30",
            "--timeout",
            "300",
            "--json",
        ])
        .args(backend)
        .current_dir(dir)
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "sk-replay-not-a-key")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "investigate exited {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "proposal_generated", "{report:#}");
    assert_eq!(report["state"], "finalized");
    assert_eq!(result_of(&run)["patch"]["unit"], "s");
    let exec: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("execution.json")).unwrap())
            .unwrap();
    assert_eq!(exec["driver"], "claude-code");
    assert!(
        exec["usage"]["totalCostUsd"]
            .as_f64()
            .is_some_and(|c| c > 0.0),
        "no cost: {}",
        exec["usage"]
    );
    assert!(exec["usage"]["inputTokens"].as_u64().is_some_and(|n| n > 0));
    assert!(exec["record"]["startedAt"].is_string() && exec["record"]["endedAt"].is_string());
    assert!(
        exec["record"]["lines"]
            .as_array()
            .is_some_and(|l| l.len() > 5),
        "no log lines"
    );
    assert!(
        exec["attestation"]["enforced"].is_array() && exec["attestation"]["unenforced"].is_array()
    );
    assert!(exec["violation"].is_null());
    server.stop();
}

#[test]
fn investigate_runs_claude_under_bubblewrap_to_proposal_generated() {
    if tools_or_skip(&["claude", "bwrap"]) {
        investigate_with_claude(&["--backend", "bubblewrap"]);
    }
}

#[test]
fn investigate_runs_claude_natively_only_with_consent() {
    if tools_or_skip(&["claude"]) {
        investigate_with_claude(&["--backend", "native", "--allow-degraded-native"]);
    }
}

#[test]
fn native_without_consent_refuses_with_the_seed_message_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let run = open_case(
        dir,
        "annotate-unit",
        "op.create_payment.input.body.capture_timeout",
    );
    let out = Command::new(BIN)
        .args(["case", "investigate"])
        .arg(&run)
        .args([
            "--driver",
            "command",
            "--backend",
            "native",
            "--command",
            "touch",
            "output/ran",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Native execution cannot enforce repository read-only and case-only writes. Use a sandboxed backend or pass --allow-degraded-native to acknowledge the reduced containment."),
        "{stderr}"
    );
    assert!(!run.join("output/ran").exists(), "the agent ran");
    assert!(!run.join("execution.json").exists());
}

#[test]
fn a_command_driver_that_edits_the_repository_is_a_containment_violation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let run = open_case(
        dir,
        "annotate-unit",
        "op.create_payment.input.body.capture_timeout",
    );
    let victim = dir.join("repo/docs/payments.md");
    let script = format!(
        "echo 'capture_timeout is in ms' >> '{}'; echo done",
        victim.display()
    );
    let out = Command::new(BIN)
        .args(["case", "investigate"])
        .arg(&run)
        .args([
            "--driver",
            "command",
            "--backend",
            "native",
            "--allow-degraded-native",
            "--json",
            "--command",
            "sh",
            "-c",
            &script,
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let changed = report["violation"]["changed"].as_array().unwrap();
    assert!(
        changed.iter().any(|c| c == "docs/payments.md"),
        "{report:#}"
    );
    let exec: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("execution.json")).unwrap())
            .unwrap();
    assert!(!exec["violation"].is_null());
}
