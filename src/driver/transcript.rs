//! The agent's transcript, read from Claude Code's stream-json events: what it said, each
//! tool it called and what each call returned.
//!
//! Invariant: derived from the logged lines only, so it can be rebuilt from
//! `execution.log.jsonl` at any time; tool results are clipped, never rewritten.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
                let clipped = text.chars().count() > MAX_RESULT_CHARS;
                out.push(Event::ToolResult {
                    id: block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    is_error: block
                        .get("is_error")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    content: text.chars().take(MAX_RESULT_CHARS).collect(),
                    clipped,
                });
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
