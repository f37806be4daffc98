//! `anvil-bench mcp serve`: an rmcp client lists the tools and runs a whole case through
//! them with no shell; the real `claude` binary does the same against `replay-model`.
//!
//! The `claude` tests need `claude` on PATH (npm i -g @anthropic-ai/claude-code): without
//! it they fail when CI=true and otherwise print why they skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

mod common;
use common::{BIN, Server, result_of, tools_or_skip};

const TARGET: &str = "op.create_payment.input.body.capture_timeout";

/// The bundled example in `dir` and a freshly opened annotate-unit run.
fn open_case(dir: &Path) -> PathBuf {
    anvil_bench::demo::write_example(dir).unwrap();
    dir.join(common::open_case(dir, "annotate-unit", TARGET))
}

type Client = RunningService<RoleClient, ()>;

async fn connect(run: &Path) -> Client {
    let mut command = tokio::process::Command::new(BIN);
    command.args(["mcp", "serve", "--run"]).arg(run);
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A successful call's JSON result.
async fn ok(client: &Client, tool: &str, arguments: Value) -> Value {
    let result = call(client, tool, arguments).await;
    assert_ne!(result.is_error, Some(true), "{tool}: {}", text(&result));
    serde_json::from_str(&text(&result)).unwrap()
}

/// A refused call's text.
async fn refused(client: &Client, tool: &str, arguments: Value) -> String {
    let result = call(client, tool, arguments).await;
    assert_eq!(result.is_error, Some(true), "{tool}: {}", text(&result));
    text(&result)
}

const RAIL_TOOLS: &[&str] = &[
    "add_evidence",
    "add_external_evidence",
    "add_claim",
    "freeze_research",
    "validate",
    "finalize",
    "show",
];

const ROUTER_TOOLS: &[&str] = &[
    "source_list_files",
    "source_find_text",
    "source_find_symbol",
    "source_read_context",
    "database_describe",
    "database_lookup",
    "database_find_references",
];

fn proposal(claim: &str) -> Value {
    json!({
        "format": "anvil-proposal",
        "formatVersion": 1,
        "skill": "annotate-unit",
        "skillVersion": 1,
        "deficiency": "unit_ambiguous_field",
        "target": TARGET,
        "patch": {"target": TARGET, "set": {"unit": "s"}},
        "grounding": {"unit": [claim]},
        "confidence": 0.9,
        "rationale": "service.py builds timedelta(seconds=capture_timeout); the test passes 45 as seconds."
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tools_are_listed_with_closed_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_case(tmp.path());
    let client = connect(&run).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in RAIL_TOOLS.iter().chain(ROUTER_TOOLS) {
        assert!(names.contains(name), "{name} missing from {names:?}");
    }
    for tool in &tools {
        let schema = tool.schema_as_json_value();
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert_eq!(
            schema["additionalProperties"], false,
            "{}: {schema:#}",
            tool.name
        );
        let mutating = tool
            .annotations
            .as_ref()
            .is_none_or(|a| a.read_only_hint != Some(true));
        if RAIL_TOOLS.contains(&tool.name.as_ref()) && mutating {
            assert!(
                schema["required"]
                    .as_array()
                    .is_some_and(|r| r.contains(&json!("idempotencyKey"))),
                "{}: {schema:#}",
                tool.name
            );
        }
    }
    // The server refuses what the schema refuses: an unknown field, before any rail runs.
    let text = refused(
        &client,
        "add_evidence",
        json!({"path": "src/payments/service.py", "idempotencyKey": "e1", "excerpt": "forged"}),
    )
    .await;
    assert!(text.starts_with("rejected_document: "), "{text}");
    assert!(text.contains("excerpt"), "{text}");
    assert!(!run.join("output/evidence.json").exists());
    // An unknown tool is a protocol error, not a panic; the server keeps serving.
    let unknown = client.call_tool(CallToolRequestParams::new("shell")).await;
    assert!(unknown.is_err());
    let show = ok(&client, "show", json!({})).await;
    assert_eq!(show["state"], "open");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_whole_case_runs_through_the_tools_to_proposal_generated() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_case(tmp.path());
    let client = connect(&run).await;

    let found = ok(
        &client,
        "source_find_text",
        json!({"text": "capture_timeout", "caseSensitive": true}),
    )
    .await;
    let text_of = found.to_string();
    assert!(text_of.contains("src/payments/service.py"), "{found:#}");
    let read = ok(
        &client,
        "source_read_context",
        json!({"path": "src/payments/service.py", "startLine": 33, "endLine": 38}),
    )
    .await;
    assert!(read.to_string().contains("timedelta(seconds="), "{read:#}");
    // A router refusal is a tool error with the router's kind.
    let outside = refused(
        &client,
        "source_read_context",
        json!({"path": "../air.json", "startLine": 1, "endLine": 2}),
    )
    .await;
    assert!(!outside.starts_with("internal"), "{outside}");

    let code = ok(
        &client,
        "add_evidence",
        json!({"path": "src/payments/service.py", "startLine": 33, "endLine": 38, "idempotencyKey": "ev-code"}),
    )
    .await;
    let test = ok(
        &client,
        "add_evidence",
        json!({"path": "tests/test_capture.py", "startLine": 6, "endLine": 9, "idempotencyKey": "ev-test"}),
    )
    .await;
    let (code_id, test_id) = (code["id"].as_str().unwrap(), test["id"].as_str().unwrap());
    // The same key and arguments replay the saved outcome.
    let again = ok(
        &client,
        "add_evidence",
        json!({"path": "src/payments/service.py", "startLine": 33, "endLine": 38, "idempotencyKey": "ev-code"}),
    )
    .await;
    assert_eq!(again["id"], code["id"]);
    // The same key with other arguments is the rail's conflict, by kind.
    let conflict = refused(
        &client,
        "add_evidence",
        json!({"path": "docs/payments.md", "idempotencyKey": "ev-code"}),
    )
    .await;
    assert!(conflict.starts_with("idempotency_conflict: "), "{conflict}");
    // A path outside the repository is the rail's refusal, by kind.
    let escape = refused(
        &client,
        "add_evidence",
        json!({"path": "../air.json", "idempotencyKey": "ev-escape"}),
    )
    .await;
    assert!(!escape.starts_with("internal"), "{escape}");

    let claim = ok(
        &client,
        "add_claim",
        json!({"predicate": "field.unit", "value": "s", "artifactIds": [code_id, test_id],
               "confidence": 0.9, "idempotencyKey": "cl-unit"}),
    )
    .await;
    let claim_id = claim["id"].as_str().unwrap();
    // Validation before the freeze is an illegal transition, by kind.
    let early = refused(&client, "validate", json!({"idempotencyKey": "v0"})).await;
    assert!(early.starts_with("illegal_transition: "), "{early}");

    let research = ok(&client, "freeze_research", json!({"idempotencyKey": "fr"})).await;
    assert!(research["claims"].is_array(), "{research:#}");
    // As an agent's Write tool would.
    std::fs::write(
        run.join("output/proposal.json"),
        serde_json::to_string_pretty(&proposal(claim_id)).unwrap(),
    )
    .unwrap();
    let dry = ok(
        &client,
        "validate",
        json!({"dryRun": true, "idempotencyKey": "v-dry"}),
    )
    .await;
    assert_eq!(dry["verdict"], "pass", "{dry:#}");
    let verdict = ok(&client, "validate", json!({"idempotencyKey": "v1"})).await;
    assert_eq!(verdict["verdict"], "pass", "{verdict:#}");
    let result = ok(&client, "finalize", json!({"idempotencyKey": "fin"})).await;
    assert_eq!(result["status"], "proposal_generated", "{result:#}");
    let show = ok(&client, "show", json!({})).await;
    assert_eq!(show["state"], "finalized");
    let bad = refused(
        &client,
        "finalize",
        json!({"status": "maybe", "idempotencyKey": "fin2"}),
    )
    .await;
    assert!(bad.starts_with("unknown_status: "), "{bad}");
    client.cancel().await.unwrap();

    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("output/result.json")).unwrap())
            .unwrap();
    assert_eq!(on_disk["status"], "proposal_generated");
}

fn script(run: &Path) -> Value {
    let id = |k: usize| format!("{{{{result.{k}|\"id\": \"([^\"]+)\"}}}}");
    let mut proposal = proposal("CLAIM");
    proposal["grounding"]["unit"] = json!([id(4)]);
    let tool = |name: &str, input: Value| json!({"content": [{"type": "tool_use", "name": name, "input": input}]});
    json!({
        "format": "anvil-replay-script",
        "formatVersion": 1,
        "turns": [
            tool("mcp__anvil__source_find_text", json!({"text": "capture_timeout", "caseSensitive": true})),
            tool("mcp__anvil__source_read_context", json!({"path": "src/payments/service.py", "startLine": 33, "endLine": 38})),
            tool("mcp__anvil__add_evidence", json!({"path": "src/payments/service.py", "startLine": 33, "endLine": 38, "idempotencyKey": "ev-code"})),
            tool("mcp__anvil__add_evidence", json!({"path": "tests/test_capture.py", "startLine": 6, "endLine": 9, "idempotencyKey": "ev-test"})),
            tool("mcp__anvil__add_claim", json!({"predicate": "field.unit", "value": "s", "artifactIds": [id(2), id(3)], "confidence": 0.9, "idempotencyKey": "cl-unit"})),
            tool("mcp__anvil__freeze_research", json!({"idempotencyKey": "freeze"})),
            tool("Write", json!({"file_path": run.join("output/proposal.json").display().to_string(), "content": serde_json::to_string_pretty(&proposal).unwrap()})),
            tool("mcp__anvil__validate", json!({"idempotencyKey": "validate"})),
            tool("mcp__anvil__finalize", json!({"idempotencyKey": "finalize"})),
            {"content": [{"type": "text", "text": "Finalized: {{result.8|\"status\": \"(\\w+)\"}}"}]}
        ]
    })
}

/// Runs `case investigate --driver claude-code` (MCP tools) with the real `claude` against a
/// replay model started with `server_args`, on a fresh annotate-unit case; asserts the
/// case reached `proposal_generated` with unit `s` and returns the temp dir holding it, the
/// run and the agent's stream-json events.
fn investigate_with_claude(
    server_args: impl FnOnce(&Path, &Path) -> Vec<String>,
    driver_args: &[&str],
    backend: &[&str],
) -> (tempfile::TempDir, PathBuf, Vec<Value>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let run = std::fs::canonicalize(open_case(dir)).unwrap();
    let args = server_args(dir, &run);
    let server = Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let out = Command::new(BIN)
        .args(["case", "investigate"])
        .arg(&run)
        .args(["--driver", "claude-code"])
        .args(driver_args)
        .args(["--max-turns", "30", "--timeout", "300", "--json"])
        .args(backend)
        .current_dir(dir)
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "sk-replay-not-a-key")
        .output()
        .unwrap();
    let exec = std::fs::read_to_string(run.join("execution.json")).unwrap_or_default();
    assert!(
        out.status.success(),
        "investigate exited {:?}: {}\n{exec}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "proposal_generated", "{report:#}\n{exec}");
    assert_eq!(report["state"], "finalized");
    assert_eq!(result_of(&run)["patch"]["unit"], "s");
    // The agent was configured with this server.
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("workspace/anvil-mcp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(config["mcpServers"]["anvil"]["args"][0], "mcp");
    let exec: Value = serde_json::from_str(&exec).unwrap();
    let events: Vec<Value> = exec["record"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| serde_json::from_str(l["text"].as_str()?).ok())
        .collect();
    // The temp dir goes back to the caller, so the run lives as long as it needs it.
    (tmp, run, events)
}

/// No shell was offered, the MCP server connected, and every call went through: no
/// permission denials, no refused tool.
fn assert_clean_session(events: &[Value]) {
    let init = events.iter().find(|e| e["subtype"] == "init").unwrap();
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(!tools.contains(&"Bash"), "a shell was offered: {tools:?}");
    assert!(tools.contains(&"mcp__anvil__add_claim"), "{tools:?}");
    assert_eq!(init["mcp_servers"][0]["status"], "connected", "{init:#}");
    let last = events.iter().rev().find(|e| e["type"] == "result").unwrap();
    assert_eq!(last["subtype"], "success", "{last:#}");
    assert_eq!(last["permission_denials"], json!([]), "{last:#}");
    let refused: Vec<&Value> = events
        .iter()
        .flat_map(|e| e["message"]["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result" && b["is_error"] == true)
        .collect();
    assert!(refused.is_empty(), "refused tool calls: {refused:#?}");
}

/// The real `claude` against the replay script: every step is an MCP tool call except the
/// proposal's Write.
fn investigate_through_mcp(backend: &[&str]) {
    let (_tmp, _run, events) = investigate_with_claude(
        |dir, run| {
            let script_path = dir.join("script.json");
            std::fs::write(&script_path, script(run).to_string()).unwrap();
            vec!["--script".into(), script_path.display().to_string()]
        },
        &["--tools", "mcp"],
        backend,
    );
    assert_clean_session(&events);
}

#[test]
fn claude_runs_a_case_through_mcp_tools_natively() {
    if tools_or_skip(&["claude"]) {
        investigate_through_mcp(&["--backend", "native", "--allow-degraded-native"]);
    }
}

#[test]
fn claude_runs_a_case_through_mcp_tools_under_bubblewrap() {
    if tools_or_skip(&["claude", "bwrap"]) {
        investigate_through_mcp(&["--backend", "bubblewrap"]);
    }
}

// --- `replay-model --policy heuristic` through the MCP tools -----------------------------
//
// The simulated-client tests of the same plan are unit tests: src/replay/simulated_claude.rs.

/// The real `claude` with the default tools (MCP) against `replay-model --policy heuristic`.
fn investigate_heuristic_through_mcp(backend: &[&str]) {
    let (_tmp, _run, events) = investigate_with_claude(
        |_, _| vec!["--policy".into(), "heuristic".into()],
        &[],
        backend,
    );
    assert_clean_session(&events);
    let used: Vec<&str> = events
        .iter()
        .flat_map(|e| e["message"]["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| b["name"].as_str())
        .collect();
    for tool in [
        "mcp__anvil__source_find_text",
        "mcp__anvil__source_read_context",
        "mcp__anvil__add_evidence",
        "mcp__anvil__add_claim",
        "mcp__anvil__freeze_research",
        "Write",
        "mcp__anvil__validate",
        "mcp__anvil__finalize",
    ] {
        assert!(used.contains(&tool), "{tool} not used: {used:?}");
    }
}

#[test]
fn claude_runs_the_heuristic_policy_through_mcp_tools_natively() {
    if tools_or_skip(&["claude"]) {
        investigate_heuristic_through_mcp(&["--backend", "native", "--allow-degraded-native"]);
    }
}

#[test]
fn claude_runs_the_heuristic_policy_through_mcp_tools_under_bubblewrap() {
    if tools_or_skip(&["claude", "bwrap"]) {
        investigate_heuristic_through_mcp(&["--backend", "bubblewrap"]);
    }
}

// --- The protocol on the wire: lines a client library would never send ------------------

/// `mcp serve` on `run` driven line by line: what a client writes, as it writes it.
struct Wire {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    replies: std::sync::mpsc::Receiver<Value>,
}

impl Wire {
    /// The server, past the handshake.
    fn start(run: &Path) -> Wire {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child = Command::new(BIN)
            .args(["mcp", "serve", "--run"])
            .arg(run)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let reply = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the server wrote a line that is not JSON: {e}: {line}")
                });
                if tx.send(reply).is_err() {
                    break;
                }
            }
        });
        let mut wire = Wire {
            child,
            stdin,
            replies,
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "wire", "version": "1"}}});
        wire.send(&[
            init.to_string(),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        ]);
        assert_eq!(wire.reply()["id"], 0);
        wire
    }

    /// Writes `lines` in one write, as a client sending several requests at once does.
    fn send(&mut self, lines: &[String]) {
        use std::io::Write;
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        self.stdin.write_all(text.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line the server writes. The timeout only turns a missing reply into a
    /// failure instead of a hang.
    fn reply(&self) -> Value {
        self.replies
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("no reply from the server")
    }

    /// The next `n` replies, by id (a refusal with no id under `null`).
    fn replies(&self, n: usize) -> Vec<(String, Value)> {
        (0..n)
            .map(|_| {
                let reply = self.reply();
                (reply["id"].to_string(), reply)
            })
            .collect()
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tool_call(id: u64, tool: &str, arguments: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
    .to_string()
}

/// The text of a tool result in a reply.
fn reply_text(reply: &Value) -> String {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("not a tool result: {reply}"))
        .to_string()
}

/// The rails the journal recorded, in order.
fn journal_rails(run: &Path) -> Vec<String> {
    std::fs::read_to_string(run.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["rail"].to_string())
        .collect()
}

/// Regression: tool calls sent together ran in parallel and in any order (freeze_research
/// first, freezing an empty research and refusing the rest).
#[test]
fn tool_calls_sent_together_run_in_the_order_they_were_sent() {
    let evidence = json!({"path": "src/payments/service.py", "startLine": 33, "endLine": 38, "idempotencyKey": "ev"});
    // An artifact's id is its coordinate's hash: a probe run learns the one to cite.
    let probe = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(&open_case(probe.path()));
    wire.send(&[tool_call(1, "add_evidence", &evidence)]);
    let artifact: Value = serde_json::from_str(&reply_text(&wire.reply())).unwrap();
    drop(wire);
    // Without the ordering the calls land in order some of the time: a few tries.
    for attempt in 0..5 {
        let tmp = tempfile::tempdir().unwrap();
        let run = open_case(tmp.path());
        let mut wire = Wire::start(&run);
        wire.send(&[
            tool_call(1, "add_evidence", &evidence),
            tool_call(
                2,
                "add_claim",
                &json!({"predicate": "field.unit", "value": "s", "artifactIds": [artifact["id"]],
                        "confidence": 0.9, "idempotencyKey": "cl"}),
            ),
            tool_call(3, "freeze_research", &json!({"idempotencyKey": "fr"})),
        ]);
        let mut replies = wire.replies(3);
        replies.sort_by(|a, b| a.0.cmp(&b.0));
        for (id, reply) in &replies {
            assert_ne!(
                reply["result"]["isError"],
                true,
                "attempt {attempt}, id {id}: {}",
                reply_text(reply)
            );
        }
        let research: Value = serde_json::from_str(&reply_text(&replies[2].1)).unwrap();
        assert_eq!(
            research["claims"].as_array().map(Vec::len),
            Some(1),
            "{research:#}"
        );
        let rails = journal_rails(&run);
        let last: Vec<&str> = rails
            .iter()
            .rev()
            .take(3)
            .rev()
            .map(String::as_str)
            .collect();
        assert_eq!(
            last,
            ["\"add-evidence\"", "\"add-claim\"", "\"freeze-research\""],
            "attempt {attempt}: {rails:?}"
        );
    }
}

/// Regression: two requests with one id in flight both ran, and one got no response.
#[test]
fn a_request_whose_id_is_in_flight_is_refused_without_running() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_case(tmp.path());
    let mut wire = Wire::start(&run);
    let evidence = |key: &str| json!({"path": "src/payments/service.py", "idempotencyKey": key});
    wire.send(&[
        tool_call(7, "add_evidence", &evidence("first")),
        tool_call(7, "add_evidence", &evidence("second")),
    ]);
    let replies = wire.replies(2);
    assert!(replies.iter().all(|(id, _)| id == "7"), "{replies:?}");
    let refused: Vec<&Value> = replies
        .iter()
        .map(|(_, r)| r)
        .filter(|r| r.get("error").is_some())
        .collect();
    assert_eq!(refused.len(), 1, "{replies:?}");
    assert_eq!(refused[0]["error"]["code"], -32600);
    let message = refused[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("id 7 is already in flight"), "{message}");
    // Only the first ran; once answered, its id is free again.
    let keys: Vec<String> = std::fs::read_to_string(run.join("journal.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| l["idempotencyKey"].as_str().map(str::to_string))
        .collect();
    assert_eq!(keys, ["first"]);
    wire.send(&[tool_call(7, "show", &json!({}))]);
    let show = wire.reply();
    assert_eq!(show["id"], 7);
    assert!(reply_text(&show).contains("\"state\""), "{show}");
}

/// Regression: a key given twice in a tool call's arguments was resolved last-one-wins.
#[test]
fn a_key_given_twice_in_a_tool_call_is_refused_by_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_case(tmp.path());
    let mut wire = Wire::start(&run);
    let call = |id: u64, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add_evidence","arguments":{arguments}}}}}"#
        )
    };
    wire.send(&[
        call(
            1,
            r#"{"path":"/etc/passwd","idempotencyKey":"k","path":"src/payments/service.py"}"#,
        ),
        call(
            2,
            r#"{"path":"src/payments/service.py","idempotencyKey":"a","idempotencyKey":"b"}"#,
        ),
        call(3, r#"{"path":"src/payments/service.py","idempotencyKey":"c","x":{"v":1,"v":2}}"#),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"show","name":"add_evidence","arguments":{}}}"#.to_string(),
    ]);
    let mut replies = wire.replies(4);
    replies.sort_by(|a, b| a.0.cmp(&b.0));
    for ((_, reply), field) in replies.iter().zip([
        "arguments.path",
        "arguments.idempotencyKey",
        "arguments.x.v",
    ]) {
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        let text = reply_text(reply);
        assert!(text.starts_with("rejected_document: "), "{text}");
        assert!(text.contains(&format!("duplicate key `{field}`")), "{text}");
    }
    let (_, outside) = &replies[3];
    assert_eq!(outside["error"]["code"], -32600, "{outside}");
    let message = outside["error"]["message"].as_str().unwrap();
    assert!(message.contains("duplicate key `params.name`"), "{message}");
    // No rail ran.
    assert!(!run.join("journal.jsonl").exists() || journal_rails(&run).is_empty());
    assert!(!run.join("output/evidence.json").exists());
}

/// Regression: a line nested past the protocol's depth got "not JSON" with id null.
#[test]
fn a_line_nested_too_deep_is_refused_as_such_with_its_id() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_case(tmp.path());
    let mut wire = Wire::start(&run);
    let value = format!("{}{}", "[".repeat(200), "]".repeat(200));
    wire.send(&[format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"add_claim","arguments":{{"predicate":"field.unit","value":{value},"artifactIds":["ev-1"],"idempotencyKey":"k"}}}}}}"#
    )]);
    let reply = wire.reply();
    assert_eq!(reply["id"], 5, "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("nested 203 deep, over the limit of 127"),
        "{message}"
    );
}

/// A `tools/call` whose params are not a call is invalid params, not an unknown method.
#[test]
fn a_tool_call_without_valid_params_is_invalid_params() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_case(tmp.path());
    let mut wire = Wire::start(&run);
    wire.send(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"show","arguments":"{}"}}"#.to_string(),
    ]);
    for (id, reply) in wire.replies(2) {
        assert_eq!(reply["error"]["code"], -32602, "{id}: {reply}");
    }
}
