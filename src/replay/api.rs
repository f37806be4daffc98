//! The Anthropic Messages API as the replay model speaks it (`POST /v1/messages`, what Claude
//! Code sends through `ANTHROPIC_BASE_URL`): reading a request's conversation, and writing an
//! assistant turn as a JSON message or as SSE events.
//!
//! Invariant: everything here is a pure function of the request body and the turn being
//! sent — ids, usage numbers and event order are deterministic, so a retried request gets
//! the same answer byte for byte.

use serde_json::{Map, Value, json};

use super::conversation::{
    Block, Conversation, ToolCall, ToolResult, Turn, Usage, chunks, json_len,
};

/// The conversation of a Messages API request body.
pub fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation {
        tools: body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        ..Conversation::default()
    };
    let mut results = Map::new();
    for message in messages(body) {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        let blocks: Vec<Value> = match message.get("content") {
            Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
            Some(Value::Array(items)) => items.clone(),
            _ => vec![],
        };
        if role == "assistant" {
            conv.assistant_turns += 1;
        }
        for block in blocks {
            match (role, block.get("type").and_then(Value::as_str)) {
                ("assistant", Some("tool_use")) => conv.tool_calls.push(ToolCall {
                    id: str_of(&block, "id"),
                    name: str_of(&block, "name"),
                    input: block.get("input").cloned().unwrap_or(Value::Null),
                    result: None,
                }),
                ("user", Some("tool_result")) => {
                    let id = str_of(&block, "tool_use_id");
                    results.insert(id, block);
                }
                ("user" | "system", Some("text")) => conv.texts.push(str_of(&block, "text")),
                _ => {}
            }
        }
    }
    for call in &mut conv.tool_calls {
        if let Some(block) = results.get(&call.id) {
            call.result = Some(ToolResult {
                text: result_text(block.get("content")),
                is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
            });
        }
    }
    conv
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn messages(body: &Value) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The usage of a request: the system prompt and tool definitions are the cacheable
/// prefix, the last message the newest.
#[must_use]
pub fn usage(body: &Value, body_len: usize, output: &Value) -> Usage {
    let msgs = messages(body);
    let first = !msgs
        .iter()
        .any(|m| m.get("role").and_then(Value::as_str) == Some("assistant"));
    Usage::from_sizes(
        json_len(body.get("system")) + json_len(body.get("tools")),
        body_len,
        first,
        json_len(msgs.last()),
        output.to_string().len(),
    )
}

/// Usage in the Messages API's words.
#[must_use]
pub fn usage_json(u: Usage) -> Value {
    json!({
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "output_tokens": u.output_tokens,
    })
}

/// A turn ready to send: ids assigned, usage computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub id: String,
    pub model: String,
    /// Content blocks in wire form (`text`, or `tool_use` with id, name and input).
    pub content: Vec<Value>,
    pub stop_reason: &'static str,
    pub usage: Usage,
}

impl Reply {
    /// Gives `turn` ids derived from its position (`position` assistant turns precede it),
    /// so ids are unique within a conversation and identical on a retry. Clients merge
    /// consecutive assistant messages that share an id, so a constant id would be a bug.
    pub fn build(turn: &Turn, position: usize, body: &Value, body_len: usize) -> Reply {
        let content: Vec<Value> = turn
            .blocks
            .iter()
            .enumerate()
            .map(|(i, block)| match block {
                Block::Text(text) => json!({"type": "text", "text": text}),
                Block::ToolUse { name, input } => json!({
                    "type": "tool_use",
                    "id": format!("toolu_replay_{position:03}_{i:02}"),
                    "name": name,
                    "input": input,
                }),
            })
            .collect();
        let usage = usage(body, body_len, &Value::Array(content.clone()));
        Reply {
            id: format!("msg_replay_{position:03}"),
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("replay")
                .to_string(),
            stop_reason: if turn.has_tool_use() {
                "tool_use"
            } else {
                "end_turn"
            },
            content,
            usage,
        }
    }

    /// The non-streaming response body.
    #[must_use]
    pub fn message_json(&self) -> Value {
        json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self.content,
            "stop_reason": self.stop_reason,
            "stop_sequence": null,
            "usage": usage_json(self.usage),
        })
    }

    /// The streaming response as (event name, data) pairs, in the order the API sends them:
    /// `message_start`, ping, per block start/deltas/stop, `message_delta`, `message_stop`.
    /// Text and tool input arrive in several deltas so clients exercise reassembly.
    pub fn sse_events(&self) -> Vec<(&'static str, Value)> {
        let mut start_usage = self.usage;
        start_usage.output_tokens = 1;
        let mut events = vec![
            (
                "message_start",
                json!({"type": "message_start", "message": {
                    "id": self.id, "type": "message", "role": "assistant", "model": self.model,
                    "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": usage_json(start_usage),
                }}),
            ),
            ("ping", json!({"type": "ping"})),
        ];
        for (index, block) in self.content.iter().enumerate() {
            let (start, delta_kind, payload) = match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => (
                    json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                    "input_json_delta",
                    block["input"].to_string(),
                ),
                _ => (
                    json!({"type": "text", "text": ""}),
                    "text_delta",
                    block["text"].as_str().unwrap_or("").to_string(),
                ),
            };
            events.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            ));
            for piece in chunks(&payload, 48) {
                let delta = if delta_kind == "text_delta" {
                    json!({"type": "text_delta", "text": piece})
                } else {
                    json!({"type": "input_json_delta", "partial_json": piece})
                };
                events.push((
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index, "delta": delta}),
                ));
            }
            events.push((
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        events.push((
            "message_delta",
            json!({"type": "message_delta",
                "delta": {"stop_reason": self.stop_reason, "stop_sequence": null},
                "usage": usage_json(self.usage)}),
        ));
        events.push(("message_stop", json!({"type": "message_stop"})));
        events
    }
}

/// The body of an API error, in the API's shape.
#[must_use]
pub fn error_json(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Value {
        json!({
            "model": "claude-test", "stream": true, "system": "be brief",
            "tools": [{"name": "Bash"}, {"name": "Read"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "# Case `x`"}]},
                {"role": "system", "content": "Primary working directory: /w"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "a", "name": "Bash", "input": {"command": "ls"}},
                    {"type": "tool_use", "id": "b", "name": "Read", "input": {"file_path": "/f"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "b", "content": [{"type": "text", "text": "1\tx"}]},
                    {"type": "tool_result", "tool_use_id": "a", "content": "boom", "is_error": true}]}
            ]
        })
    }

    #[test]
    fn conversation_matches_results_to_calls_by_id_not_order() {
        let conv = conversation(&request());
        assert_eq!(conv.assistant_turns, 1);
        assert_eq!(conv.texts, ["# Case `x`", "Primary working directory: /w"]);
        assert_eq!(conv.tools, ["Bash", "Read"]);
        let results: Vec<_> = conv
            .tool_calls
            .iter()
            .map(|c| c.result.clone().unwrap())
            .collect();
        assert_eq!(
            results[0],
            ToolResult {
                text: "boom".into(),
                is_error: true
            }
        );
        assert_eq!(
            results[1],
            ToolResult {
                text: "1\tx".into(),
                is_error: false
            }
        );
    }

    #[test]
    fn reply_ids_follow_the_position_and_usage_is_non_zero_and_stable() {
        let body = request();
        let turn = Turn {
            blocks: vec![
                Block::Text("hi".into()),
                Block::ToolUse {
                    name: "Bash".into(),
                    input: json!({"command": "pwd"}),
                },
            ],
        };
        let a = Reply::build(&turn, 1, &body, 900);
        assert_eq!(a, Reply::build(&turn, 1, &body, 900));
        assert_eq!(a.id, "msg_replay_001");
        assert_eq!(a.content[1]["id"], "toolu_replay_001_01");
        assert_eq!(a.stop_reason, "tool_use");
        let u = a.usage;
        assert!(u.input_tokens > 0 && u.output_tokens > 0 && u.cache_read_input_tokens > 0);
        assert!(u.cache_creation_input_tokens > 0);
        assert_eq!(
            Reply::build(&Turn::text("done"), 2, &body, 900).stop_reason,
            "end_turn"
        );
    }

    #[test]
    fn sse_events_come_in_api_order_and_reassemble_to_the_message() {
        let input =
            json!({"command": "grep -rn 'a much longer pattern than one chunk' /some/where/else"});
        let turn = Turn {
            blocks: vec![
                Block::Text("é".repeat(40)),
                Block::ToolUse {
                    name: "Bash".into(),
                    input: input.clone(),
                },
            ],
        };
        let reply = Reply::build(&turn, 0, &request(), 100);
        let events = reply.sse_events();
        let names: Vec<_> = events.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.first(), Some(&"message_start"));
        assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
        let mut text = String::new();
        let mut json_text = String::new();
        for (name, data) in &events {
            assert_eq!(data["type"], *name);
            if *name == "content_block_delta" {
                text.push_str(data["delta"]["text"].as_str().unwrap_or(""));
                json_text.push_str(data["delta"]["partial_json"].as_str().unwrap_or(""));
            }
        }
        assert_eq!(text, "é".repeat(40));
        assert_eq!(serde_json::from_str::<Value>(&json_text).unwrap(), input);
        assert!(
            names
                .iter()
                .filter(|n| **n == "content_block_delta")
                .count()
                > 2
        );
        let delta = &events[events.len() - 2].1;
        assert_eq!(delta["delta"]["stop_reason"], "tool_use");
        assert_eq!(delta["usage"]["output_tokens"], reply.usage.output_tokens);
    }
}
