//! The lines a client sends `mcp serve`, read with a cap and classified before the protocol
//! sees them.
//!
//! Invariant: no line grows the server's memory past [`Limit::McpLineBytes`] (the rest of
//! an over-long line is read and dropped), and every line is either passed on as JSON text
//! or answered with a JSON-RPC error — never dropped silently, never ending the session.

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::limits::Limit;

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
    match serde_json::from_str::<Value>(text) {
        Ok(_) => Line::Json(text.to_string()),
        Err(_) => Line::NotJson,
    }
}

/// The JSON-RPC error answering a line that cannot be passed on (`None` for the rest).
#[must_use]
pub fn refusal(line: &Line, cap: u64) -> Option<Value> {
    let (code, message) = match line {
        Line::NotJson => (-32700, "Parse error: the line is not JSON".to_string()),
        Line::TooLong => (
            -32600,
            format!(
                "Invalid Request: the line {}",
                Limit::McpLineBytes.exceeded(cap, None)
            ),
        ),
        Line::Blank | Line::Json(_) => return None,
    };
    Some(json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}))
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
}
