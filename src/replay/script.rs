//! `--script FILE`: a versioned list of assistant turns played in order.
//!
//! ```json
//! {"format": "anvil-replay-script", "formatVersion": 1, "turns": [
//!   {"content": [{"type": "text", "text": "Looking."},
//!                {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}]},
//!   {"content": [{"type": "text", "text": "ls said {{result.0|(\\w+)\\.py}}"}]}]}
//! ```
//!
//! Turn N answers the request whose conversation already holds N assistant turns. Strings
//! inside `text` and inside `input` may say `{{result.K}}` — the text of the result of the
//! K-th tool call of the conversation (0-based, in the order the calls were made) — or
//! `{{result.K|REGEX}}` — the first match of REGEX in it (its first capture group when it
//! has one). A regex cannot contain `}}`.
//!
//! Invariant: the answer is a pure function of the script and the request's history, so a
//! retried request gets the same turn; a script is checked whole (fields, placeholders,
//! regexes) before the server starts.

use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::conversation::{Block, Conversation, Turn};

pub const SCRIPT_FORMAT: &str = "anvil-replay-script";
pub const SCRIPT_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawScript {
    format: String,
    format_version: u32,
    turns: Vec<RawTurn>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTurn {
    content: Vec<RawBlock>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum RawBlock {
    Text {
        text: String,
    },
    ToolUse {
        name: String,
        input: Map<String, Value>,
    },
}

/// Why a script was refused: the JSON path of the offending value and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("replay script is invalid at `{path}`: {reason}")]
pub struct ScriptError {
    pub path: String,
    pub reason: String,
}

/// A checked script.
#[derive(Debug, Clone)]
pub struct Script {
    turns: Vec<Turn>,
}

/// A placeholder found in a string.
#[derive(Debug, Clone)]
struct Placeholder {
    /// Byte range of `{{…}}` in the string.
    range: std::ops::Range<usize>,
    index: usize,
    regex: Option<Regex>,
}

fn placeholders(s: &str) -> Result<Vec<Placeholder>, String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = s[from..].find("{{result.").map(|i| i + from) {
        let body_start = open + "{{result.".len();
        let Some(close) = s[body_start..].find("}}").map(|i| i + body_start) else {
            return Err(format!("placeholder at byte {open} has no closing `}}}}`"));
        };
        let body = &s[body_start..close];
        let (index, regex) = match body.split_once('|') {
            Some((i, re)) => (i, Some(re)),
            None => (body, None),
        };
        let index: usize = index.parse().map_err(|_| {
            format!("`{{{{result.{body}}}}}`: `{index}` is not a tool result index")
        })?;
        let regex = regex
            .map(|re| Regex::new(re).map_err(|e| format!("`{re}` is not a regex: {e}")))
            .transpose()?;
        out.push(Placeholder {
            range: open..close + 2,
            index,
            regex,
        });
        from = close + 2;
    }
    Ok(out)
}

/// Strict parse naming the path of the offending value; for an unknown field the path ends
/// with the field itself (once: `serde_path_to_error` already names it for plain structs).
fn parse_raw(text: &str) -> Result<RawScript, ScriptError> {
    let value: Value = crate::json_path::parse(text).map_err(|e| ScriptError {
        path: e.path,
        reason: e.message,
    })?;
    serde_path_to_error::deserialize(value).map_err(|err| {
        let mut path = err.path().to_string();
        let reason = err.inner().to_string();
        let unknown = reason
            .strip_prefix("unknown field `")
            .and_then(|r| r.split_once('`'))
            .map(|(k, _)| k);
        if let Some(key) = unknown
            && path.rsplit(['.', ']']).next() != Some(key)
        {
            path = if path == "." || path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            };
        }
        ScriptError { path, reason }
    })
}

/// Visits every string value of `v` (not object keys) with its JSON path.
fn check_strings(v: &Value, path: &str) -> Result<(), ScriptError> {
    match v {
        Value::String(s) => placeholders(s).map(|_| ()).map_err(|reason| ScriptError {
            path: path.to_string(),
            reason,
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check_strings(x, &format!("{path}[{i}]"))),
        Value::Object(map) => map
            .iter()
            .try_for_each(|(k, x)| check_strings(x, &format!("{path}.{k}"))),
        _ => Ok(()),
    }
}

impl Script {
    /// Parses and checks a script document.
    ///
    /// # Errors
    ///
    /// Text that is not a script document (unknown keys, wrong format or version), or a
    /// turn whose placeholders name a tool result that cannot exist yet.
    pub fn parse(text: &str) -> Result<Script, ScriptError> {
        let raw: RawScript = parse_raw(text)?;
        if raw.format != SCRIPT_FORMAT {
            return Err(ScriptError {
                path: "format".into(),
                reason: format!("expected `{SCRIPT_FORMAT}`, found `{}`", raw.format),
            });
        }
        if raw.format_version != SCRIPT_FORMAT_VERSION {
            return Err(ScriptError {
                path: "formatVersion".into(),
                reason: format!(
                    "this anvil-bench reads version {SCRIPT_FORMAT_VERSION}, found {}",
                    raw.format_version
                ),
            });
        }
        let mut turns = Vec::new();
        for (t, turn) in raw.turns.into_iter().enumerate() {
            if turn.content.is_empty() {
                return Err(ScriptError {
                    path: format!("turns[{t}].content"),
                    reason: "a turn needs at least one block".into(),
                });
            }
            let mut blocks = Vec::new();
            for (b, block) in turn.content.into_iter().enumerate() {
                let path = format!("turns[{t}].content[{b}]");
                blocks.push(match block {
                    RawBlock::Text { text } => {
                        check_strings(&Value::String(text.clone()), &format!("{path}.text"))?;
                        Block::Text(text)
                    }
                    RawBlock::ToolUse { name, input } => {
                        let input = Value::Object(input);
                        check_strings(&input, &format!("{path}.input"))?;
                        Block::ToolUse { name, input }
                    }
                });
            }
            turns.push(Turn { blocks });
        }
        Ok(Script { turns })
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The turn that answers `conv`: scripted turn N with its placeholders filled, or a
    /// closing text turn once the script is exhausted (or a placeholder cannot be filled).
    #[must_use]
    pub fn answer(&self, conv: &Conversation) -> Turn {
        let n = conv.assistant_turns;
        let Some(turn) = self.turns.get(n) else {
            return Turn::text(format!(
                "Replay script finished after {} scripted turns.",
                self.turns.len()
            ));
        };
        let results: Vec<&str> = conv
            .tool_calls
            .iter()
            .map(|c| c.result.as_ref().map_or("", |r| r.text.as_str()))
            .collect();
        let filled: Result<Vec<Block>, String> = turn
            .blocks
            .iter()
            .map(|block| match block {
                Block::Text(t) => fill(t, &results).map(Block::Text),
                Block::ToolUse { name, input } => {
                    fill_value(input, &results).map(|input| Block::ToolUse {
                        name: name.clone(),
                        input,
                    })
                }
            })
            .collect();
        match filled {
            Ok(blocks) => Turn { blocks },
            Err(reason) => Turn::text(format!("Replay script stopped at turn {n}: {reason}.")),
        }
    }
}

/// Replaces the placeholders in `s` from `results`.
///
/// # Errors
///
/// A malformed placeholder, or one that names a tool result the conversation does not have.
pub fn fill(s: &str, results: &[&str]) -> Result<String, String> {
    let found = placeholders(s)?;
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for p in found {
        out.push_str(&s[last..p.range.start]);
        let Some(text) = results.get(p.index) else {
            return Err(format!(
                "`{}` refers to tool result {}, but the conversation has {}",
                &s[p.range.clone()],
                p.index,
                results.len()
            ));
        };
        match &p.regex {
            None => out.push_str(text),
            Some(re) => {
                let Some(caps) = re.captures(text) else {
                    return Err(format!(
                        "`{}` does not match tool result {}",
                        &s[p.range.clone()],
                        p.index
                    ));
                };
                let m = caps.get(1).or_else(|| caps.get(0)).map(|m| m.as_str());
                out.push_str(m.unwrap_or(""));
            }
        }
        last = p.range.end;
    }
    out.push_str(&s[last..]);
    Ok(out)
}

fn fill_value(v: &Value, results: &[&str]) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => Value::String(fill(s, results)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| fill_value(x, results))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| Ok((k.clone(), fill_value(x, results)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::conversation::{ToolCall, ToolResult};
    use serde_json::json;

    const SCRIPT: &str = r#"{"format": "anvil-replay-script", "formatVersion": 1, "turns": [
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "anvil-bench case add-evidence ."}}]},
        {"content": [{"type": "text", "text": "got {{result.0}}"},
                     {"type": "tool_use", "name": "Bash",
                      "input": {"command": "add-claim --artifact {{result.0|(ev-[0-9a-f]+)}}", "n": [1, "{{result.0|ev}}"]}}]}
    ]}"#;

    fn conv(turns: usize, results: &[&str]) -> Conversation {
        Conversation {
            assistant_turns: turns,
            tool_calls: results
                .iter()
                .enumerate()
                .map(|(i, r)| ToolCall {
                    id: format!("t{i}"),
                    name: "Bash".into(),
                    input: json!({}),
                    result: Some(ToolResult {
                        text: r.to_string(),
                        is_error: false,
                    }),
                })
                .collect(),
            ..Conversation::default()
        }
    }

    #[test]
    fn turn_n_answers_a_conversation_with_n_assistant_turns_and_fills_placeholders() {
        let script = Script::parse(SCRIPT).unwrap();
        assert_eq!(script.len(), 2);
        let first = script.answer(&conv(0, &[]));
        assert!(first.has_tool_use());
        let second = script.answer(&conv(1, &["id: ev-0e4b7\n"]));
        assert_eq!(second.blocks[0], Block::Text("got id: ev-0e4b7\n".into()));
        let Block::ToolUse { input, .. } = &second.blocks[1] else {
            panic!("tool use")
        };
        assert_eq!(input["command"], "add-claim --artifact ev-0e4b7");
        assert_eq!(input["n"], json!([1, "ev"]));
        // Idempotent: the same history gives the same turn.
        assert_eq!(second, script.answer(&conv(1, &["id: ev-0e4b7\n"])));
        let done = script.answer(&conv(2, &["a", "b"]));
        assert!(!done.has_tool_use());
    }

    #[test]
    fn a_placeholder_that_cannot_be_filled_ends_the_conversation_with_a_reason() {
        let script = Script::parse(SCRIPT).unwrap();
        let Block::Text(t) = &script.answer(&conv(1, &[])).blocks[0] else {
            panic!()
        };
        assert!(
            t.contains("refers to tool result 0, but the conversation has 0"),
            "{t}"
        );
        let Block::Text(t) = &script.answer(&conv(1, &["no id here"])).blocks[0] else {
            panic!()
        };
        assert!(t.contains("does not match tool result 0"), "{t}");
    }

    #[test]
    fn unknown_fields_are_refused_with_their_path() {
        let bad = SCRIPT.replace(r#""name": "Bash","#, r#""name": "Bash", "colour": 1,"#);
        let err = Script::parse(&bad).unwrap_err();
        assert_eq!(err.path, "turns[0].content[0].colour", "{err}");
        let err = Script::parse(
            r#"{"format": "anvil-replay-script", "formatVersion": 1, "turns": [], "x": 1}"#,
        )
        .unwrap_err();
        assert_eq!(err.path, "x");
        let err = Script::parse(r#"{"format": "anvil-replay-script", "formatVersion": 1, "turns": [{"content": [], "y": 1}]}"#)
            .unwrap_err();
        assert_eq!(err.path, "turns[0].y");
        let err =
            Script::parse(r#"{"format": "anvil-replay-script", "formatVersion": 2, "turns": []}"#)
                .unwrap_err();
        assert_eq!(err.path, "formatVersion");
    }

    #[test]
    fn bad_placeholders_are_refused_before_serving() {
        let bad = SCRIPT.replace("(ev-[0-9a-f]+)", "(ev-[");
        let err = Script::parse(&bad).unwrap_err();
        assert_eq!(err.path, "turns[1].content[1].input.command");
        let bad = SCRIPT.replace("{{result.0}}", "{{result.x}}");
        assert_eq!(
            Script::parse(&bad).unwrap_err().path,
            "turns[1].content[0].text"
        );
    }

    #[test]
    fn fill_uses_the_whole_match_without_a_group() {
        assert_eq!(fill("[{{result.0|\\d+}}]", &["abc 42 7"]).unwrap(), "[42]");
        assert_eq!(
            fill("no placeholders {{x}}", &[]).unwrap(),
            "no placeholders {{x}}"
        );
    }
}
