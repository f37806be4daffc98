//! The heuristic policy through the `anvil` MCP tools, against a simulated Claude Code:
//! the real MCP server (in process, calling the rails directly), `Write`, and results
//! shaped as Claude Code sends them back (text blocks, `is_error`, completion order).
//! `tests/mcp.rs` runs the same plan with the real `claude`.

use std::path::{Path, PathBuf};

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::Player;
use crate::mcp::AnvilServer;
use crate::mcp::rail_backend::RailBackend;

const TARGET: &str = "op.create_payment.input.body.capture_timeout";

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

fn result_of(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("output/result.json")).unwrap()).unwrap()
}

/// The run of `skill`/`target` on a fresh copy of the bundled example (after `edit` has
/// had its way with the repository).
fn open_other_case(dir: &Path, skill: &str, target: &str, edit: impl Fn(&Path)) -> PathBuf {
    crate::demo::write_example(dir).unwrap();
    edit(&dir.join("repo"));
    let opened = crate::case::open(&crate::case::OpenRequest {
        air: dir.join("air.json"),
        repo: dir.join("repo"),
        skill: skill.into(),
        target: target.into(),
        deficiency: None,
        cases_dir: dir.join("cases"),
        executor: "test".into(),
        scopes: vec![],
        mode: crate::case::OpenMode::New,
        tool_limits: vec![],
        snapshots: vec![],
    })
    .unwrap();
    std::fs::canonicalize(opened.run_dir).unwrap()
}

/// How the simulated client behaves.
#[derive(Default)]
struct SimClient {
    /// Refuse every call of this tool, as a client whose call failed would.
    refuse: Option<&'static str>,
    /// Leave the environment block (and its working directory) out of the conversation.
    no_environment: bool,
}

/// Plays Claude Code's side of the tool loop in-process with `--tools mcp`: the `anvil`
/// server's tools (the real server, calling the rails directly) and `Write`, results shaped
/// as Claude Code sends them back (text blocks, `is_error`, completion order).
fn simulate_mcp(run: &Path, client: &SimClient) -> Vec<Value> {
    let handle = crate::case::RunHandle::open(run).unwrap();
    let server = AnvilServer::new(&handle, RailBackend::Direct).unwrap();
    let mut prompt = std::fs::read_to_string(run.join("CASE.md")).unwrap();
    prompt.push_str(&crate::driver::mcp_wiring::mcp_brief());
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": prompt}]})];
    if !client.no_environment {
        messages.push(json!({"role": "system", "content": format!(
            "# Environment\n - Primary working directory: {}\n - Is a git repository: false",
            run.display()
        )}));
    }
    let mut tools: Vec<Value> = ["Read", "Grep", "Glob", "Write"]
        .iter()
        .map(|t| json!({"name": t}))
        .collect();
    tools.extend(
        server
            .tools()
            .iter()
            .map(|t| json!({"name": format!("mcp__anvil__{}", t.name)})),
    );
    for _ in 0..30 {
        let body = json!({"model": "m", "stream": false, "tools": tools, "messages": messages});
        let (reply, _) = Player::Heuristic.reply(&body, body.to_string().len());
        assert_eq!(
            Player::Heuristic.reply(&body, body.to_string().len()).0,
            reply,
            "a retried request gets the same turn"
        );
        messages.push(json!({"role": "assistant", "content": reply.content}));
        if reply.stop_reason == "end_turn" {
            return messages;
        }
        let mut results = Vec::new();
        for block in reply.content.iter().filter(|b| b["type"] == "tool_use") {
            let name = block["name"].as_str().unwrap();
            let input = block["input"].clone();
            let (text, is_error) = if client.refuse == Some(name) {
                ("internal: refused by the test".to_string(), true)
            } else if name == "Write" {
                let path = input["file_path"].as_str().unwrap();
                assert!(path.starts_with(&run.display().to_string()), "{path}");
                std::fs::write(path, input["content"].as_str().unwrap()).unwrap();
                (format!("File created successfully at: {path}"), false)
            } else if let Some(tool) = name.strip_prefix("mcp__anvil__") {
                let result = server.call(tool, input).unwrap_or_else(|| panic!("{name}"));
                (text(&result), result.is_error == Some(true))
            } else {
                (
                    format!(
                        "<tool_use_error>Error: No such tool available: {name}</tool_use_error>"
                    ),
                    true,
                )
            };
            results.push(json!({"type": "tool_result", "tool_use_id": block["id"],
                "content": [{"type": "text", "text": text}], "is_error": is_error}));
        }
        results.reverse();
        messages.push(json!({"role": "user", "content": results}));
    }
    panic!("the policy did not end within 30 turns");
}

/// Every tool call of a simulated conversation: (name, input).
fn calls(transcript: &[Value]) -> Vec<(String, Value)> {
    transcript
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_use")
        .map(|b| (b["name"].as_str().unwrap().to_string(), b["input"].clone()))
        .collect()
}

#[test]
fn the_heuristic_policy_closes_every_demo_case_through_the_mcp_tools() {
    let cases: &[(&str, &str, &str, Value)] = &[
        ("annotate-unit", TARGET, "unit", json!("s")),
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
        let run = open_other_case(tmp.path(), skill, target, |_| {});
        let transcript = simulate_mcp(&run, &SimClient::default());
        let last = &transcript.last().unwrap()["content"][0]["text"];
        assert_eq!(
            result_of(&run)["status"],
            "proposal_generated",
            "{target}: {last}"
        );
        let proposal: Value = serde_json::from_str(
            &std::fs::read_to_string(run.join("output/proposal.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(&proposal["patch"]["set"][field], expected, "{target}");
        let calls = calls(&transcript);
        let names: Vec<&str> = calls.iter().map(|(n, _)| n.as_str()).collect();
        assert!(
            names
                .iter()
                .all(|n| n.starts_with("mcp__anvil__") || *n == "Write"),
            "{names:?}"
        );
        for step in [
            "source_find_text",
            "source_read_context",
            "add_evidence",
            "add_claim",
            "freeze_research",
            "validate",
            "finalize",
        ] {
            assert!(
                names.contains(&format!("mcp__anvil__{step}").as_str()),
                "{step}: {names:?}"
            );
        }
        for (name, input) in &calls {
            let mutating = [
                "add_evidence",
                "add_claim",
                "freeze_research",
                "validate",
                "finalize",
            ]
            .iter()
            .any(|t| name == &format!("mcp__anvil__{t}"));
            if mutating {
                assert!(input["idempotencyKey"].is_string(), "{name}: {input}");
            }
        }
    }
}

#[test]
fn through_mcp_a_case_with_nothing_to_find_is_declined_honestly() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_other_case(tmp.path(), "annotate-unit", TARGET, |repo| {
        for file in [
            "src/payments/service.py",
            "tests/test_capture.py",
            "docs/payments.md",
        ] {
            let p = repo.join(file);
            let text = std::fs::read_to_string(&p)
                .unwrap()
                .replace("capture_timeout", "window");
            std::fs::write(p, text).unwrap();
        }
    });
    let transcript = simulate_mcp(&run, &SimClient::default());
    let result = result_of(&run);
    assert_eq!(result["status"], "insufficient_evidence", "{result:#}");
    // The broader search terms still find the operation, but nothing states a unit.
    assert!(
        result["claims"].as_array().unwrap().is_empty(),
        "{result:#}"
    );
    let names: Vec<String> = calls(&transcript).into_iter().map(|(n, _)| n).collect();
    assert!(!names.iter().any(|n| n == "Write"), "{names:?}");
    assert!(!run.join("output/proposal.json").exists());
}

#[test]
fn through_mcp_a_refused_rail_is_declined_honestly_not_retried() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_other_case(
        tmp.path(),
        "enrich-error",
        "op.create_payment.error.RATE_LIMITED",
        |_| {},
    );
    let client = SimClient {
        refuse: Some("mcp__anvil__add_claim"),
        ..SimClient::default()
    };
    let transcript = simulate_mcp(&run, &client);
    let result = result_of(&run);
    assert_eq!(result["status"], "insufficient_evidence", "{result:#}");
    assert!(
        result
            .to_string()
            .contains("add-claim failed: internal: refused by the test"),
        "{result:#}"
    );
    let claims = calls(&transcript)
        .iter()
        .filter(|(n, _)| n == "mcp__anvil__add_claim")
        .count();
    assert_eq!(claims, 1, "the refused rail is not retried");
    assert!(!run.join("output/proposal.json").exists());
}

#[test]
fn through_mcp_a_failed_search_is_a_decline_that_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_other_case(tmp.path(), "annotate-unit", TARGET, |_| {});
    let client = SimClient {
        refuse: Some("mcp__anvil__source_find_text"),
        ..SimClient::default()
    };
    let transcript = simulate_mcp(&run, &client);
    let result = result_of(&run);
    assert_eq!(result["status"], "insufficient_evidence", "{result:#}");
    assert!(result.to_string().contains("search failed"), "{result:#}");
    let searches = calls(&transcript)
        .iter()
        .filter(|(n, _)| n == "mcp__anvil__source_find_text")
        .count();
    assert_eq!(
        searches, 2,
        "one search (the name and its twin spelling), then the decline"
    );
}

#[test]
fn through_mcp_without_an_environment_block_the_run_is_located_with_show() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_other_case(tmp.path(), "annotate-unit", TARGET, |_| {});
    let client = SimClient {
        no_environment: true,
        ..SimClient::default()
    };
    let transcript = simulate_mcp(&run, &client);
    assert_eq!(result_of(&run)["status"], "proposal_generated");
    let names: Vec<String> = calls(&transcript).into_iter().map(|(n, _)| n).collect();
    let show = names
        .iter()
        .position(|n| n == "mcp__anvil__show")
        .expect("show");
    assert_eq!(names[show + 1], "Write", "{names:?}");
}

#[test]
fn through_mcp_a_refused_write_is_a_decline_not_a_finalized_proposal() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_other_case(tmp.path(), "annotate-unit", TARGET, |_| {});
    let client = SimClient {
        refuse: Some("Write"),
        ..SimClient::default()
    };
    simulate_mcp(&run, &client);
    let result = result_of(&run);
    assert_eq!(result["status"], "insufficient_evidence", "{result:#}");
    assert!(
        result.to_string().contains("could not write the proposal"),
        "{result:#}"
    );
}

#[test]
fn through_mcp_sources_that_disagree_are_both_claimed_and_finalized_conflicted() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_other_case(tmp.path(), "annotate-unit", TARGET, |repo| {
        std::fs::write(
            repo.join("tests/test_capture.py"),
            "def test_capture_timeout_is_milliseconds():\n    request = CreatePayment(amount=1000, currency=\"EUR\", capture_timeout=45000)\n    assert capture_window(request) == timedelta(milliseconds=45000)\n",
        )
        .unwrap();
    });
    let transcript = simulate_mcp(&run, &SimClient::default());
    let result = result_of(&run);
    assert_eq!(result["status"], "conflicted", "{result:#}");
    assert_eq!(result["claims"].as_array().unwrap().len(), 2, "{result:#}");
    let keys: Vec<String> = calls(&transcript)
        .into_iter()
        .filter(|(n, _)| n == "mcp__anvil__add_claim")
        .map(|(_, input)| input["idempotencyKey"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        keys,
        ["anvil-replay-add_claim-1", "anvil-replay-add_claim-2"]
    );
    assert!(!run.join("output/proposal.json").exists());
}

#[test]
fn through_mcp_an_inferred_value_the_code_states_is_finalized_supported() {
    let tmp = tempfile::tempdir().unwrap();
    let run = open_other_case(tmp.path(), "annotate-unit", TARGET, |repo| {
        let air = repo.parent().unwrap().join("air.json");
        let text = std::fs::read_to_string(&air).unwrap().replace(
            r#""name": "capture_timeout", "type": "integer", "required": false,
         "description": "How long to wait for capture before the authorisation is voided.", "unit": null,"#,
            r#""name": "capture_timeout", "type": "integer", "required": false, "inferred": ["unit"],
         "description": "How long to wait for capture before the authorisation is voided.", "unit": "s","#,
        );
        assert!(
            text.contains(r#""inferred": ["unit"]"#),
            "the example AIR changed"
        );
        std::fs::write(air, text).unwrap();
    });
    simulate_mcp(&run, &SimClient::default());
    let result = result_of(&run);
    assert_eq!(result["status"], "supported", "{result:#}");
    assert_eq!(result["supported"]["value"], "s", "{result:#}");
    assert!(!run.join("output/proposal.json").exists());
}
