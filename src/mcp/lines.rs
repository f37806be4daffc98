//! The lines a client sends `mcp serve`, read with a cap and classified before the protocol
//! sees them.
//!
//! Invariant: no line grows the server's memory past [`Limit::McpLineBytes`] (the rest of
//! an over-long line is read and dropped), and every line is either passed on as JSON text
//! with no key repeated in any object, or answered with a JSON-RPC error (or, for a tool
//! call's arguments, a tool error) — never dropped silently, never ending the session.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::case::CaseError;
use crate::case::proposal::{DocError, DocErrorKind};
use crate::limits::Limit;

/// The deepest nesting of arrays and objects a line may have: serde_json, which the protocol
/// reads lines with, stops at 128 levels.
pub const MAX_DEPTH: usize = 127;

/// One line from the client, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Blank: ignored.
    Blank,
    /// JSON text, passed on to the protocol as is.
    Json(String),
    /// Not UTF-8 or not JSON: answered with a parse error (-32700).
    NotJson,
    /// Longer than the cap: answered with an invalid-request error (-32600) naming it.
    TooLong,
    /// JSON nested deeper than [`MAX_DEPTH`]: answered with an invalid-request error
    /// (-32600) saying so, carrying the request's id when it can be read (else null).
    TooDeep { depth: usize, id: Value },
    /// JSON with a key given twice in one object (at `path`, from the line's root): answered
    /// with an invalid-request error (-32600) naming the path, or, inside the `arguments`
    /// of a call to `tool`, with that tool's `rejected_document` refusal.
    RepeatsAKey {
        path: String,
        id: Value,
        tool: Option<String>,
    },
}

/// The id and method of a request, read without building it: enough to answer a line that
/// is refused. Other members are skipped without recursion (and without serde_json's depth
/// limit), so a line nested too deep still gives its id.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
}

/// The tool a `tools/call` names, read the same way.
#[derive(Deserialize)]
struct Call {
    params: CallParams,
}

#[derive(Deserialize)]
struct CallParams {
    name: String,
}

/// The id of the request on `text` when it has one a JSON-RPC id can be (a string or a
/// number), else null; and the tool it calls, if it is a `tools/call`.
fn head(text: &str) -> (Value, Option<String>) {
    let Ok(head) = serde_json::from_str::<Head>(text) else {
        return (Value::Null, None);
    };
    let id = match head.id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        _ => Value::Null,
    };
    let tool = match head.method.as_deref() {
        Some("tools/call") => serde_json::from_str::<Call>(text)
            .ok()
            .map(|c| c.params.name),
        _ => None,
    };
    (id, tool)
}

/// How deep `text` nests arrays and objects, counted in one pass without recursion.
fn depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Classifies the bytes of one line (without its newline).
#[must_use]
pub fn classify(bytes: &[u8]) -> Line {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Line::NotJson;
    };
    if text.trim().is_empty() {
        return Line::Blank;
    }
    // serde_json keeps the last of a repeated key: the strict parser refuses it instead, so
    // what a rail is called with is never a guess at which of two values was meant.
    let Err(e) = crate::json_path::parse(text) else {
        return Line::Json(text.to_string());
    };
    let depth = depth(text);
    if depth > MAX_DEPTH {
        let (id, _) = head(text);
        return Line::TooDeep { depth, id };
    }
    if !e.message.starts_with("duplicate key") {
        return Line::NotJson;
    }
    let (id, tool) = head(text);
    Line::RepeatsAKey {
        path: e.path,
        id,
        tool,
    }
}

/// The JSON-RPC message answering a line that cannot be passed on (`None` for the rest).
#[must_use]
pub fn refusal(line: &Line, cap: u64) -> Option<Value> {
    let (id, code, message) = match line {
        Line::NotJson => (
            Value::Null,
            -32700,
            "Parse error: the line is not JSON".to_string(),
        ),
        Line::TooLong => (
            Value::Null,
            -32600,
            format!(
                "Invalid Request: the line {}",
                Limit::McpLineBytes.exceeded(cap, None)
            ),
        ),
        Line::TooDeep { depth, id } => (
            id.clone(),
            -32600,
            format!(
                "Invalid Request: the line is nested {depth} deep, over the limit of {MAX_DEPTH}"
            ),
        ),
        Line::RepeatsAKey {
            path,
            id,
            tool: Some(tool),
        } if path.starts_with("params.arguments.") => {
            // The tool's own refusal of its arguments, as an unknown field gets.
            let field = path.trim_start_matches("params.");
            let reason = format!("duplicate key `{field}` (each key may appear once)");
            let e = CaseError::Document(DocError::new(tool, field, DocErrorKind::Syntax, reason));
            let result =
                CallToolResult::error(vec![ContentBlock::text(format!("{}: {e}", e.kind()))]);
            let result = serde_json::to_value(result).unwrap_or_default();
            return Some(json!({"jsonrpc": "2.0", "id": id, "result": result}));
        }
        Line::RepeatsAKey { path, id, .. } => (
            id.clone(),
            -32600,
            format!("Invalid Request: duplicate key `{path}` (each key may appear once)"),
        ),
        Line::Blank | Line::Json(_) => return None,
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// Reads the next line of at most `cap` bytes; `None` at end of input. An over-long line is
/// consumed to its newline without being kept.
///
/// # Errors
///
/// The I/O error reading from `reader`. A line that is over the cap, not UTF-8 or not JSON
/// is not an error: it comes back classified.
pub async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    cap: u64,
) -> std::io::Result<Option<Line>> {
    let mut buf = Vec::new();
    let mut too_long = false;
    let mut seen_any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            break;
        }
        seen_any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if (buf.len() + chunk.len()) as u64 > cap {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = done.unwrap_or(available.len());
        reader.consume(consumed);
        if done.is_some() {
            break;
        }
    }
    Ok(match (seen_any, too_long) {
        (false, _) => None,
        (true, true) => Some(Line::TooLong),
        (true, false) => Some(classify(buf.strip_suffix(b"\r").unwrap_or(&buf))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8], cap: u64) -> Vec<Line> {
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(line) = next_line(&mut reader, cap).await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn an_over_long_line_is_dropped_whole_and_the_next_one_still_read() {
        let lines = all(b"{\"a\": 1}\n[1,2,3,4,5,6,7,8,9]\n\n\xff\nnope\r\n[]", 10).await;
        assert_eq!(
            lines,
            [
                Line::Json("{\"a\": 1}".into()),
                Line::TooLong,
                Line::Blank,
                Line::NotJson,
                Line::NotJson,
                Line::Json("[]".into()),
            ]
        );
        let e = refusal(&Line::TooLong, 10).unwrap();
        assert_eq!(e["error"]["code"], -32600);
        let message = e["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("MCP_LINE_BYTES cap of 10")
                && message.contains("ANVIL_MAX_MCP_LINE_BYTES"),
            "{message}"
        );
    }

    #[test]
    fn a_line_nested_past_the_limit_is_too_deep_and_keeps_its_id() {
        let nested = |n: usize| {
            let value = format!("{}{}", "[".repeat(n), "]".repeat(n));
            format!(
                r#"{{"id": "a\"[{{", "params": {{"arguments": {{"v": {value}}}}}, "method": "m"}}"#
            )
        };
        let within = nested(MAX_DEPTH - 3);
        assert!(matches!(classify(within.as_bytes()), Line::Json(_)));
        let line = classify(nested(MAX_DEPTH - 2).as_bytes());
        assert_eq!(
            line,
            Line::TooDeep {
                depth: MAX_DEPTH + 1,
                id: json!("a\"[{")
            }
        );
        let e = refusal(&line, 10).unwrap();
        assert_eq!(
            (&e["id"], &e["error"]["code"]),
            (&json!("a\"[{"), &json!(-32600))
        );
        let message = e["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("nested 128 deep, over the limit of 127"),
            "{message}"
        );
        // An id that is not one a request can have is not echoed.
        let line = classify(nested(300).replace(r#""a\"[{""#, "[1]").as_bytes());
        assert!(
            matches!(
                line,
                Line::TooDeep {
                    id: Value::Null,
                    ..
                }
            ),
            "{line:?}"
        );
    }

    #[test]
    fn a_repeated_key_is_refused_by_its_path() {
        let line = classify(
            br#"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add_claim",
                "arguments": {"value": {"a": 1, "a": 2}}}}"#,
        );
        assert_eq!(
            line,
            Line::RepeatsAKey {
                path: "params.arguments.value.a".into(),
                id: json!(2),
                tool: Some("add_claim".into()),
            }
        );
        let e = refusal(&line, 10).unwrap();
        assert_eq!(e["id"], 2);
        assert_eq!(e["result"]["isError"], true, "{e}");
        let text = e["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("rejected_document: ")
                && text.contains("duplicate key `arguments.value.a`"),
            "{text}"
        );
        // Outside a tool's arguments, the request itself is invalid.
        let line = classify(br#"{"jsonrpc": "2.0", "id": 3, "id": 4, "method": "ping"}"#);
        let e = refusal(&line, 10).unwrap();
        assert_eq!(
            (&e["id"], &e["error"]["code"]),
            (&Value::Null, &json!(-32600))
        );
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains("duplicate key `id`"), "{message}");
    }
}
