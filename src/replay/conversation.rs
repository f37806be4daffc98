//! The replay model's core, whatever the wire: the conversation a request carries (what the
//! client said, the tool calls made so far with their results, the tools it offers) and the
//! assistant turn that answers it. [`super::api`] (Anthropic Messages) and
//! [`super::responses`] (OpenAI Responses) read a request into a [`Conversation`] and write a
//! [`Turn`] back; the players ([`super::heuristic`], [`super::script`]) see only these types.
//!
//! Invariant: a conversation names a tool the way the players call it, whatever the wire: an
//! MCP tool is `mcp__<server>__<tool>` (Claude Code's name for it; the Responses wire sends
//! Codex's namespace `mcp__<server>` and the bare tool name, and is translated both ways).

use serde_json::Value;

/// One content block of an assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    ToolUse { name: String, input: Value },
}

/// An assistant turn before it is given ids and usage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    pub blocks: Vec<Block>,
}

impl Turn {
    /// A turn with one text block (it ends the conversation).
    pub fn text(text: impl Into<String>) -> Turn {
        Turn {
            blocks: vec![Block::Text(text.into())],
        }
    }

    #[must_use]
    pub fn has_tool_use(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }))
    }
}

/// A tool call the model made earlier in the conversation, with its result when the client
/// sent one.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
    pub result: Option<ToolResult>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub text: String,
    pub is_error: bool,
}

/// What a request says about its conversation.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// Assistant turns so far: the position of the turn to answer.
    pub assistant_turns: usize,
    /// Text the client sent (user and system or developer messages), in order.
    pub texts: Vec<String>,
    /// Tool calls in the order the assistant made them; results are matched by id, since
    /// clients send results in completion order.
    pub tool_calls: Vec<ToolCall>,
    /// Names of the tools the request offers.
    pub tools: Vec<String>,
}

impl Conversation {
    #[must_use]
    pub fn offers(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t == tool)
    }
}

/// Token counts reported for a turn. Derived from sizes (about four bytes a token) so that
/// cost accounting downstream sees plausible, non-zero, reproducible numbers. The wires
/// word them differently (Anthropic reports cache reads and writes beside the input; OpenAI
/// counts them inside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

/// About four bytes a token, at least one.
#[must_use]
pub fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4).max(1)
}

/// The byte length of `v` as JSON (0 when absent).
#[must_use]
pub fn json_len(v: Option<&Value>) -> usize {
    v.map_or(0, |v| v.to_string().len())
}

impl Usage {
    /// The usage of one request of `body_len` bytes answered with `output_len` bytes. The
    /// system prompt and tool definitions (`prefix_len` bytes) are the cacheable prefix:
    /// written to the cache on a conversation's first request (`first`), read from it
    /// afterwards, when the newest message (`newest_len` bytes) is what gets written.
    #[must_use]
    pub fn from_sizes(
        prefix_len: usize,
        body_len: usize,
        first: bool,
        newest_len: usize,
        output_len: usize,
    ) -> Usage {
        let prefix = tokens(prefix_len);
        let (creation, read) = if first {
            (prefix, 0)
        } else {
            (tokens(newest_len), prefix)
        };
        Usage {
            input_tokens: tokens(body_len).saturating_sub(prefix).max(1),
            output_tokens: tokens(output_len),
            cache_creation_input_tokens: creation,
            cache_read_input_tokens: read,
        }
    }
}

/// Splits `s` into pieces of at most `max` bytes on character boundaries (at least one
/// piece, possibly empty).
#[must_use]
pub fn chunks(s: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while rest.len() > max {
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (head, tail) = rest.split_at(cut.max(1));
        out.push(head);
        rest = tail;
    }
    out.push(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_never_split_a_character() {
        assert_eq!(chunks("", 4), [""]);
        assert_eq!(chunks("abcdef", 4), ["abcd", "ef"]);
        assert_eq!(chunks("ééé", 3), ["é", "é", "é"]);
    }

    #[test]
    fn the_prefix_is_written_first_and_read_afterwards() {
        let first = Usage::from_sizes(400, 1000, true, 50, 40);
        assert_eq!(first.cache_creation_input_tokens, 100);
        assert_eq!(first.cache_read_input_tokens, 0);
        assert_eq!(first.input_tokens, 150);
        let later = Usage::from_sizes(400, 1000, false, 40, 40);
        assert_eq!(later.cache_creation_input_tokens, 10);
        assert_eq!(later.cache_read_input_tokens, 100);
        assert_eq!(later.output_tokens, 10);
    }
}
