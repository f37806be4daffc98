//! The agent's transcript, read from Claude Code's stream-json events or Codex's JSONL
//! items: what it said, each tool it called and what each call returned.
//!
//! Invariant: derived from the logged lines only, so it can be rebuilt from
//! `execution.log.jsonl` at any time; tool results are clipped, never rewritten.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The longest tool result kept in the transcript (the full text stays in the log).
const MAX_RESULT_CHARS: usize = 2000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    Text {
        text: String,
    },
    ToolCall {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        id: String,
        is_error: bool,
        content: String,
        clipped: bool,
    },
}

fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// A tool result, clipped to [`MAX_RESULT_CHARS`].
fn tool_result(id: String, is_error: bool, text: &str) -> Event {
    Event::ToolResult {
        id,
        is_error,
        content: text.chars().take(MAX_RESULT_CHARS).collect(),
        clipped: text.chars().count() > MAX_RESULT_CHARS,
    }
}

fn str_at(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The events one `codex exec --json` line carries: a completed item's message, or its call
/// and result — a shell command as `exec_command` `{command}`, an MCP tool as
/// `mcp__<server>__<tool>` with its arguments, a file change as `file_change` (none for
/// other lines).
pub fn codex_events(line: &str) -> Vec<Event> {
    let Ok(event) = serde_json::from_str::<Value>(line) else {
        return vec![];
    };
    if event.get("type").and_then(Value::as_str) != Some("item.completed") {
        return vec![];
    }
    let Some(item) = event.get("item") else {
        return vec![];
    };
    let id = str_at(item, "/id");
    let failed = item.get("status").and_then(Value::as_str) == Some("failed");
    let call = |name: String, input: Value| Event::ToolCall {
        id: id.clone(),
        name,
        input,
    };
    match item.get("type").and_then(Value::as_str) {
        Some("agent_message") => vec![Event::Text {
            text: str_at(item, "/text"),
        }],
        Some("command_execution") => {
            let exit = item.get("exit_code").and_then(Value::as_i64);
            vec![
                call(
                    "exec_command".into(),
                    json!({"command": str_at(item, "/command")}),
                ),
                tool_result(
                    id.clone(),
                    failed || exit != Some(0),
                    &str_at(item, "/aggregated_output"),
                ),
            ]
        }
        Some("mcp_tool_call") => {
            let name = format!(
                "mcp__{}__{}",
                str_at(item, "/server"),
                str_at(item, "/tool")
            );
            let error = item.get("error").filter(|e| !e.is_null());
            let text = match error {
                Some(e) => e
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| e.to_string(), str::to_string),
                None => result_text(item.pointer("/result/content").unwrap_or(&Value::Null)),
            };
            let input = item.get("arguments").cloned().unwrap_or(Value::Null);
            vec![
                call(name, input),
                tool_result(id.clone(), failed || error.is_some(), &text),
            ]
        }
        Some("file_change") => {
            let input = json!({"changes": item.get("changes").cloned().unwrap_or(Value::Null)});
            vec![
                call("file_change".into(), input),
                tool_result(id.clone(), failed, &str_at(item, "/status")),
            ]
        }
        _ => vec![],
    }
}

/// The events one stream-json line carries (none for other lines).
pub fn claude_events(line: &str) -> Vec<Event> {
    let Ok(event) = serde_json::from_str::<Value>(line) else {
        return vec![];
    };
    let role = event.get("type").and_then(Value::as_str);
    let Some(blocks) = event.pointer("/message/content").and_then(Value::as_array) else {
        return vec![];
    };
    let mut out = Vec::new();
    for block in blocks {
        match (role, block.get("type").and_then(Value::as_str)) {
            (Some("assistant"), Some("text")) => out.push(Event::Text {
                text: block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            }),
            (Some("assistant"), Some("tool_use")) => out.push(Event::ToolCall {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                input: block.get("input").cloned().unwrap_or(Value::Null),
            }),
            (Some("user"), Some("tool_result")) => {
                let text = result_text(block.get("content").unwrap_or(&Value::Null));
                let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
                out.push(tool_result(str_at(block, "/tool_use_id"), is_error, &text));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_tool_calls_and_results_are_read() {
        let a = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Searching."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"grep -rn x ."}}]}}"#;
        let u = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"a.py:3:x","is_error":false}]}}"#;
        let mut events = claude_events(a);
        events.extend(claude_events(u));
        assert_eq!(events.len(), 3);
        assert_eq!(
            events[0],
            Event::Text {
                text: "Searching.".into()
            }
        );
        assert!(matches!(&events[1], Event::ToolCall { name, .. } if name == "Bash"));
        assert!(
            matches!(&events[2], Event::ToolResult { content, is_error: false, .. } if content == "a.py:3:x")
        );
        assert!(claude_events(r#"{"type":"result"}"#).is_empty());
        assert!(claude_events("not json").is_empty());
    }

    #[test]
    fn codex_items_become_calls_and_results() {
        let lines = [
            r#"{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"ls","status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Looking."}}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -c ls","aggregated_output":"a.py\n","exit_code":2,"status":"failed"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"anvil","tool":"show","arguments":{},"result":{"content":[{"type":"text","text":"{}"}]},"error":null,"status":"completed"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"anvil","tool":"add_claim","arguments":{"value":"s"},"result":null,"error":{"message":"refused"},"status":"failed"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":1}}"#,
        ];
        let events: Vec<Event> = lines.iter().flat_map(|l| codex_events(l)).collect();
        assert_eq!(events.len(), 7, "{events:?}");
        assert_eq!(
            events[0],
            Event::Text {
                text: "Looking.".into()
            }
        );
        assert!(
            matches!(&events[1], Event::ToolCall { id, name, input } if id == "item_2" && name == "exec_command" && input["command"] == "/bin/bash -c ls")
        );
        assert!(
            matches!(&events[2], Event::ToolResult { is_error: true, content, .. } if content == "a.py\n")
        );
        assert!(matches!(&events[3], Event::ToolCall { name, .. } if name == "mcp__anvil__show"));
        assert!(
            matches!(&events[4], Event::ToolResult { is_error: false, content, .. } if content == "{}")
        );
        assert!(
            matches!(&events[6], Event::ToolResult { is_error: true, content, .. } if content == "refused")
        );
    }

    #[test]
    fn long_results_are_clipped_and_marked() {
        let long = "y".repeat(5000);
        let u = format!(
            r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"t","content":[{{"type":"text","text":"{long}"}}]}}]}}}}"#
        );
        match &claude_events(&u)[0] {
            Event::ToolResult {
                content, clipped, ..
            } => assert!(*clipped && content.len() == MAX_RESULT_CHARS),
            other => panic!("{other:?}"),
        }
    }
}
