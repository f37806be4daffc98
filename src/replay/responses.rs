//! The OpenAI Responses API as the replay model speaks it (`POST /v1/responses`, what
//! `codex exec` sends to a provider with `wire_api = "responses"`): reading a request's
//! `input` items into a [`Conversation`], and writing a turn as a response object or as its
//! stream of server-sent events.
//!
//! What Codex sends (0.171.0, captured from a real request): `input` holds `message` items
//! (roles `developer`, `user`, `assistant`; parts `input_text` / `output_text`), the
//! model's earlier `function_call` items (`arguments` a JSON string, `call_id`, and for an
//! MCP tool a `namespace`, `mcp__anvil`, beside the bare tool name) and their
//! `function_call_output` items (a string, or a list of `input_text` parts). Tools are in
//! `tools` — functions, and `namespace` groups of functions — or, for a model Codex runs in
//! code mode, in an `additional_tools` input item. Codex opens every tool output with an
//! execution header (`Wall time: …`, `Process exited with code N`, … ending in `Output:`):
//! it is dropped here, and a non-zero exit code makes the result an error.
//!
//! Invariant: as in [`super::api`], everything here is a pure function of the request body
//! and the turn — ids, usage, event order — so a retried request gets the same bytes.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::conversation::{
    Block, Conversation, ToolCall, ToolResult, Turn, Usage, chunks, json_len,
};

/// How the conversation names a tool offered inside a namespace.
fn qualified(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}__{name}"),
        _ => name.to_string(),
    }
}

/// How a tool is called on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WireTool {
    namespace: Option<String>,
    name: String,
    /// A freeform (`custom`) tool takes a string input, not JSON arguments.
    custom: bool,
}

/// Every tool the request offers, by the name the conversation gives it.
fn offered(body: &Value) -> BTreeMap<String, WireTool> {
    fn walk(tools: &[Value], namespace: Option<&str>, out: &mut BTreeMap<String, WireTool>) {
        for t in tools {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            match t.get("type").and_then(Value::as_str) {
                Some("namespace") => {
                    let inner = t.get("tools").and_then(Value::as_array);
                    walk(inner.map_or(&[], Vec::as_slice), Some(name), out);
                }
                kind => {
                    out.insert(
                        qualified(namespace, name),
                        WireTool {
                            namespace: namespace.map(str::to_string),
                            name: name.to_string(),
                            custom: kind == Some("custom"),
                        },
                    );
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        walk(tools, None, &mut out);
    }
    for item in input(body) {
        if item.get("type").and_then(Value::as_str) == Some("additional_tools")
            && let Some(tools) = item.get("tools").and_then(Value::as_array)
        {
            walk(tools, None, &mut out);
        }
    }
    out
}

fn input(body: &Value) -> &[Value] {
    body.get("input")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

/// The text of a message's content or a tool output: a string, or parts with `text`.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The lines Codex puts above a tool's output.
const HEADER_LINES: &[&str] = &[
    "Chunk ID:",
    "Wall time:",
    "Process exited with code ",
    "Process running with session ID ",
    "Original token count:",
    "Total output lines:",
];

/// A tool output as the player reads it: Codex's execution header dropped, an error when
/// the header reports a non-zero exit code.
fn tool_result(output: Option<&Value>) -> ToolResult {
    let text = text_of(output);
    let lines: Vec<&str> = text.split('\n').collect();
    let header_end = lines.iter().take(8).position(|l| l.trim_end() == "Output:");
    let is_header = |l: &&str| HEADER_LINES.iter().any(|h| l.starts_with(h));
    let Some(end) = header_end.filter(|&end| end > 0 && lines[..end].iter().all(is_header)) else {
        return ToolResult {
            text,
            is_error: false,
        };
    };
    let code = lines[..end].iter().find_map(|l| {
        l.trim()
            .strip_prefix("Process exited with code ")?
            .parse::<i64>()
            .ok()
    });
    ToolResult {
        text: lines[end + 1..].join("\n"),
        is_error: code.is_some_and(|c| c != 0),
    }
}

/// The conversation of a Responses API request body.
pub fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation {
        tools: offered(body).into_keys().collect(),
        ..Conversation::default()
    };
    if let Some(prompt) = body.get("input").and_then(Value::as_str) {
        conv.texts.push(prompt.to_string());
    }
    let mut results = Map::new();
    // One response's items come back together; an item of another kind ends the turn.
    let mut in_turn = false;
    for item in input(body) {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        let role = item.get("role").and_then(Value::as_str).unwrap_or("");
        let assistant = match kind {
            "message" => role == "assistant",
            "function_call" | "custom_tool_call" | "reasoning" => true,
            _ => false,
        };
        if assistant && !in_turn {
            conv.assistant_turns += 1;
        }
        in_turn = assistant;
        match kind {
            "message" if matches!(role, "user" | "developer" | "system") => {
                conv.texts.push(text_of(item.get("content")));
            }
            "function_call" => {
                let arguments = str_of(item, "arguments");
                conv.tool_calls.push(ToolCall {
                    id: str_of(item, "call_id"),
                    name: qualified(
                        item.get("namespace").and_then(Value::as_str),
                        &str_of(item, "name"),
                    ),
                    input: serde_json::from_str(&arguments).unwrap_or(Value::String(arguments)),
                    result: None,
                });
            }
            "custom_tool_call" => conv.tool_calls.push(ToolCall {
                id: str_of(item, "call_id"),
                name: qualified(
                    item.get("namespace").and_then(Value::as_str),
                    &str_of(item, "name"),
                ),
                input: Value::String(str_of(item, "input")),
                result: None,
            }),
            "function_call_output" | "custom_tool_call_output" => {
                results.insert(str_of(item, "call_id"), item.clone());
            }
            _ => {}
        }
    }
    for call in &mut conv.tool_calls {
        if let Some(item) = results.get(&call.id) {
            call.result = Some(tool_result(item.get("output")));
        }
    }
    conv
}

/// The usage of a request: instructions and tool definitions are the cacheable prefix, the
/// last input item the newest.
fn usage(body: &Value, body_len: usize, output: &Value) -> Usage {
    let items = input(body);
    let first = !items.iter().any(|i| {
        i.get("role").and_then(Value::as_str) == Some("assistant")
            || i.get("type").and_then(Value::as_str) == Some("function_call")
    });
    Usage::from_sizes(
        json_len(body.get("instructions")) + json_len(body.get("tools")),
        body_len,
        first,
        json_len(items.last()),
        output.to_string().len(),
    )
}

/// Usage in the Responses API's words: cached tokens are counted inside the input.
#[must_use]
pub fn usage_json(u: Usage) -> Value {
    let input = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": u.cache_read_input_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + u.output_tokens,
    })
}

/// A turn ready to send as a response: ids assigned, usage computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub id: String,
    pub model: String,
    /// Output items in wire form: `message`, `function_call` or `custom_tool_call`.
    pub output: Vec<Value>,
    pub usage: Usage,
}

impl Response {
    /// Gives `turn` ids derived from its position (`position` assistant turns precede it):
    /// unique within a conversation, identical on a retry. A tool the request offers in a
    /// namespace is called with that namespace and its bare name.
    pub fn build(turn: &Turn, position: usize, body: &Value, body_len: usize) -> Response {
        let tools = offered(body);
        let output: Vec<Value> = turn
            .blocks
            .iter()
            .enumerate()
            .map(|(i, block)| match block {
                Block::Text(text) => json!({
                    "type": "message", "id": format!("msg_replay_{position:03}_{i:02}"),
                    "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }),
                Block::ToolUse { name, input } => {
                    let wire = tools.get(name).cloned().unwrap_or(WireTool {
                        namespace: None,
                        name: name.clone(),
                        custom: false,
                    });
                    let mut item = if wire.custom {
                        let text = input
                            .as_str()
                            .map_or_else(|| input.to_string(), str::to_string);
                        json!({"type": "custom_tool_call", "input": text})
                    } else {
                        json!({"type": "function_call", "arguments": input.to_string()})
                    };
                    item["id"] = json!(format!("fc_replay_{position:03}_{i:02}"));
                    item["call_id"] = json!(format!("call_replay_{position:03}_{i:02}"));
                    item["name"] = json!(wire.name);
                    if let Some(ns) = wire.namespace {
                        item["namespace"] = json!(ns);
                    }
                    item["status"] = json!("completed");
                    item
                }
            })
            .collect();
        let usage = usage(body, body_len, &Value::Array(output.clone()));
        Response {
            id: format!("resp_replay_{position:03}"),
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("replay")
                .to_string(),
            output,
            usage,
        }
    }

    /// Whether the turn calls a tool (the client runs it and asks again).
    #[must_use]
    pub fn calls_tools(&self) -> bool {
        self.output.iter().any(|i| i["type"] != "message")
    }

    fn object(&self, status: &str, output: Value, usage: Value) -> Value {
        json!({
            "id": self.id, "object": "response", "created_at": 0, "status": status,
            "model": self.model, "output": output, "usage": usage,
            "error": null, "incomplete_details": null,
        })
    }

    /// The non-streaming response body.
    #[must_use]
    pub fn json(&self) -> Value {
        self.object(
            "completed",
            Value::Array(self.output.clone()),
            usage_json(self.usage),
        )
    }

    /// The streaming response as (event name, data) pairs in the order the API sends them:
    /// response.created and .`in_progress`; per output item .`output_item.added`, its deltas
    /// (text, or a function call's arguments, in several pieces so clients exercise
    /// reassembly), .`output_item.done`; then response.completed with the usage. Every event
    /// carries its `sequence_number`.
    #[must_use]
    pub fn sse_events(&self) -> Vec<(&'static str, Value)> {
        let started = self.object("in_progress", json!([]), Value::Null);
        let mut events: Vec<(&'static str, Value)> = vec![
            ("response.created", json!({"response": started})),
            ("response.in_progress", json!({"response": started})),
        ];
        for (index, item) in self.output.iter().enumerate() {
            let id = item["id"].clone();
            let mut opening = item.clone();
            opening["status"] = json!("in_progress");
            match item["type"].as_str() {
                Some("message") => opening["content"] = json!([]),
                Some("function_call") => opening["arguments"] = json!(""),
                _ => {}
            }
            events.push((
                "response.output_item.added",
                json!({"output_index": index, "item": opening}),
            ));
            match item["type"].as_str() {
                Some("message") => {
                    let text = item["content"][0]["text"].as_str().unwrap_or("");
                    let at = json!({"item_id": id, "output_index": index, "content_index": 0});
                    let with = |mut v: Value, extra: Value| {
                        if let (Value::Object(dst), Value::Object(src)) = (&mut v, extra) {
                            dst.extend(src);
                        }
                        v
                    };
                    let empty = json!({"type": "output_text", "text": "", "annotations": []});
                    events.push((
                        "response.content_part.added",
                        with(at.clone(), json!({"part": empty})),
                    ));
                    for piece in chunks(text, 48) {
                        events.push((
                            "response.output_text.delta",
                            with(at.clone(), json!({"delta": piece})),
                        ));
                    }
                    events.push((
                        "response.output_text.done",
                        with(at.clone(), json!({"text": text})),
                    ));
                    events.push((
                        "response.content_part.done",
                        with(at, json!({"part": item["content"][0]})),
                    ));
                }
                Some("function_call") => {
                    let arguments = item["arguments"].as_str().unwrap_or("");
                    for piece in chunks(arguments, 48) {
                        events.push((
                            "response.function_call_arguments.delta",
                            json!({"item_id": id, "output_index": index, "delta": piece}),
                        ));
                    }
                    events.push((
                        "response.function_call_arguments.done",
                        json!({"item_id": id, "output_index": index, "arguments": arguments}),
                    ));
                }
                _ => {}
            }
            events.push((
                "response.output_item.done",
                json!({"output_index": index, "item": item}),
            ));
        }
        events.push(("response.completed", json!({"response": self.json()})));
        for (seq, (name, data)) in events.iter_mut().enumerate() {
            data["type"] = json!(name);
            data["sequence_number"] = json!(seq);
        }
        events
    }
}

/// The body of an API error, in the Responses API's shape.
#[must_use]
pub fn error_json(kind: &str, message: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape `codex exec` 0.171.0 sends (trimmed): a developer message, the brief,
    /// then a response's items and their outputs, results in completion order.
    fn request() -> Value {
        json!({
            "model": "replay", "stream": true, "instructions": "be brief",
            "tools": [
                {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
                {"type": "namespace", "name": "mcp__anvil", "description": "rails",
                 "tools": [{"type": "function", "name": "show", "parameters": {}}]},
                {"type": "custom", "name": "apply_patch"},
                {"type": "web_search", "external_web_access": false}
            ],
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "# Case `x`"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]},
                {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}", "call_id": "a"},
                {"type": "function_call", "name": "show", "namespace": "mcp__anvil", "arguments": "{}", "call_id": "b"},
                {"type": "function_call_output", "call_id": "b", "output": [
                    {"type": "input_text", "text": "Wall time: 0.04 seconds\nOutput:"},
                    {"type": "input_text", "text": "{\"state\": \"open\"}"}]},
                {"type": "function_call_output", "call_id": "a", "output":
                    "Chunk ID: 4b\nWall time: 0.0 seconds\nProcess exited with code 2\nOriginal token count: 3\nOutput:\nls: x: No such file\n"}
            ]
        })
    }

    #[test]
    fn conversation_names_namespaced_tools_and_reads_codex_outputs() {
        let conv = conversation(&request());
        assert_eq!(conv.assistant_turns, 1);
        assert_eq!(conv.texts, ["rules", "# Case `x`"]);
        assert_eq!(
            conv.tools,
            ["apply_patch", "exec_command", "mcp__anvil__show"]
        );
        let calls: Vec<(&str, Option<&ToolResult>)> = conv
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.result.as_ref()))
            .collect();
        assert_eq!(calls[0].0, "exec_command");
        assert_eq!(conv.tool_calls[0].input, json!({"cmd": "ls"}));
        assert_eq!(
            calls[0].1,
            Some(&ToolResult {
                text: "ls: x: No such file\n".into(),
                is_error: true
            })
        );
        assert_eq!(calls[1].0, "mcp__anvil__show");
        assert_eq!(
            calls[1].1,
            Some(&ToolResult {
                text: "{\"state\": \"open\"}".into(),
                is_error: false
            })
        );
    }

    #[test]
    fn an_output_without_a_header_is_kept_whole() {
        let r = tool_result(Some(&json!("line one\nOutput:\nnot a header above")));
        assert_eq!(r.text, "line one\nOutput:\nnot a header above");
        let r = tool_result(Some(&json!("\nOutput:\nx")));
        assert!(!r.is_error && r.text.starts_with('\n'));
    }

    #[test]
    fn turns_are_counted_per_response_not_per_item() {
        let mut body = request();
        let items = body["input"].as_array_mut().unwrap();
        items.push(json!({"type": "message", "role": "assistant", "content": "done"}));
        assert_eq!(conversation(&body).assistant_turns, 2);
        assert_eq!(conversation(&json!({"input": "hi"})).texts, ["hi"]);
    }

    #[test]
    fn a_tool_call_goes_out_in_the_namespace_it_was_offered_in() {
        let turn = Turn {
            blocks: vec![
                Block::Text("Calling.".into()),
                Block::ToolUse {
                    name: "mcp__anvil__show".into(),
                    input: json!({}),
                },
                Block::ToolUse {
                    name: "exec_command".into(),
                    input: json!({"cmd": "pwd"}),
                },
                Block::ToolUse {
                    name: "apply_patch".into(),
                    input: json!("*** Begin Patch"),
                },
            ],
        };
        let r = Response::build(&turn, 2, &request(), 900);
        assert_eq!(r, Response::build(&turn, 2, &request(), 900));
        assert!(r.calls_tools());
        assert_eq!(r.id, "resp_replay_002");
        assert_eq!(r.output[0]["content"][0]["text"], "Calling.");
        assert_eq!(r.output[1]["namespace"], "mcp__anvil");
        assert_eq!(r.output[1]["name"], "show");
        assert_eq!(r.output[1]["call_id"], "call_replay_002_01");
        assert_eq!(r.output[2]["arguments"], "{\"cmd\":\"pwd\"}");
        assert!(r.output[2].get("namespace").is_none());
        assert_eq!(r.output[3]["type"], "custom_tool_call");
        assert_eq!(r.output[3]["input"], "*** Begin Patch");
        let u = usage_json(r.usage);
        assert!(
            u["input_tokens"].as_u64().unwrap()
                > u["input_tokens_details"]["cached_tokens"].as_u64().unwrap()
        );
        assert!(u["input_tokens_details"]["cached_tokens"].as_u64().unwrap() > 0);
        assert!(!Response::build(&Turn::text("done"), 3, &request(), 900).calls_tools());
    }

    #[test]
    fn sse_events_come_in_api_order_and_reassemble_to_the_response() {
        let input =
            json!({"cmd": "grep -rn 'a much longer pattern than one chunk' /some/where/else"});
        let turn = Turn {
            blocks: vec![
                Block::Text("é".repeat(40)),
                Block::ToolUse {
                    name: "exec_command".into(),
                    input: input.clone(),
                },
            ],
        };
        let r = Response::build(&turn, 0, &request(), 100);
        let events = r.sse_events();
        let names: Vec<_> = events.iter().map(|(n, _)| *n).collect();
        assert_eq!(names[..2], ["response.created", "response.in_progress"]);
        assert_eq!(names.last(), Some(&"response.completed"));
        let (mut text, mut arguments, mut done) = (String::new(), String::new(), vec![]);
        for (seq, (name, data)) in events.iter().enumerate() {
            assert_eq!(data["type"], *name);
            assert_eq!(data["sequence_number"], seq);
            match *name {
                "response.output_text.delta" => text.push_str(data["delta"].as_str().unwrap()),
                "response.function_call_arguments.delta" => {
                    arguments.push_str(data["delta"].as_str().unwrap())
                }
                "response.output_item.done" => done.push(data["item"].clone()),
                _ => {}
            }
        }
        assert_eq!(text, "é".repeat(40));
        assert_eq!(serde_json::from_str::<Value>(&arguments).unwrap(), input);
        assert_eq!(done, r.output);
        let completed = &events.last().unwrap().1["response"];
        assert_eq!(completed["status"], "completed");
        assert_eq!(completed["usage"], usage_json(r.usage));
    }
}
