//! Token and cost accounting parsed from an agent's own output.
//!
//! Invariant: numbers come only from what the agent printed; a field it did not report
//! stays `None` rather than being guessed. The one derived number is the cost of an agent
//! that prints none (Codex): its printed tokens at a stated [`TokenPrice`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What an agent reported about its consumption.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub total_cost_usd: Option<f64>,
    pub num_turns: Option<u64>,
    pub duration_ms: Option<u64>,
    pub session_id: Option<String>,
    /// True once a final result event was seen.
    pub complete: bool,
    /// Codex: whether the last item was the model talking (a message or its reasoning), so
    /// that the next one belongs to the same response.
    #[serde(skip)]
    codex_talking: bool,
    /// Codex: whether a response was counted since its turn started.
    #[serde(skip)]
    codex_counted: bool,
}

/// What a model's tokens cost, in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenPrice {
    pub input: f64,
    /// Input read from the provider's prompt cache.
    pub cached_input: f64,
    pub output: f64,
}

impl TokenPrice {
    /// `INPUT,CACHED,OUTPUT` (USD per million tokens), each finite and non-negative.
    #[must_use]
    pub fn parse(text: &str) -> Option<TokenPrice> {
        let parts: Vec<f64> = text
            .split(',')
            .map(|p| {
                p.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
            })
            .collect::<Option<_>>()?;
        match parts[..] {
            [input, cached_input, output] => Some(TokenPrice {
                input,
                cached_input,
                output,
            }),
            _ => None,
        }
    }
}

fn u(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn add(slot: &mut Option<u64>, n: Option<u64>) {
    if let Some(n) = n {
        *slot = Some(slot.unwrap_or(0) + n);
    }
}

impl Usage {
    /// Folds one line of Claude Code `--output-format stream-json` output. Assistant
    /// events carry running per-message usage (used for progress); the final `result`
    /// event carries the authoritative totals and replaces them.
    pub fn observe_claude(&mut self, line: &str) {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            return;
        };
        match event.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                if let Some(usage) = event.pointer("/message/usage") {
                    add(&mut self.input_tokens, u(usage, "input_tokens"));
                    add(&mut self.output_tokens, u(usage, "output_tokens"));
                    add(
                        &mut self.cache_creation_input_tokens,
                        u(usage, "cache_creation_input_tokens"),
                    );
                    add(
                        &mut self.cache_read_input_tokens,
                        u(usage, "cache_read_input_tokens"),
                    );
                }
                self.num_turns = Some(self.num_turns.unwrap_or(0) + 1);
            }
            Some("system") => {
                if let Some(id) = event.get("session_id").and_then(Value::as_str) {
                    self.session_id = Some(id.to_string());
                }
            }
            Some("result") => {
                if let Some(usage) = event.get("usage") {
                    self.input_tokens = u(usage, "input_tokens").or(self.input_tokens);
                    self.output_tokens = u(usage, "output_tokens").or(self.output_tokens);
                    self.cache_creation_input_tokens = u(usage, "cache_creation_input_tokens")
                        .or(self.cache_creation_input_tokens);
                    self.cache_read_input_tokens =
                        u(usage, "cache_read_input_tokens").or(self.cache_read_input_tokens);
                }
                self.total_cost_usd = event
                    .get("total_cost_usd")
                    .and_then(Value::as_f64)
                    .or(self.total_cost_usd);
                self.num_turns = u(&event, "num_turns").or(self.num_turns);
                self.duration_ms = u(&event, "duration_ms").or(self.duration_ms);
                if let Some(id) = event.get("session_id").and_then(Value::as_str) {
                    self.session_id = Some(id.to_string());
                }
                self.complete = true;
            }
            _ => {}
        }
    }

    /// Folds one line of `codex exec --json` output. `turn.completed` events carry the
    /// turn's usage, which is summed in Claude Code's words: Codex counts cached input
    /// (`cached_input_tokens`) and cache writes (`cache_write_input_tokens`) inside
    /// `input_tokens`, so the input reported here is what remains. Codex does not mark its
    /// model's responses, so a turn is counted per run of the model's messages and reasoning
    /// between tool calls (a response that only calls tools, unannounced, is not seen), and
    /// at least one per Codex turn.
    pub fn observe_codex(&mut self, line: &str) {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            return;
        };
        match event.get("type").and_then(Value::as_str) {
            Some("thread.started") => {
                if let Some(id) = event.get("thread_id").and_then(Value::as_str) {
                    self.session_id = Some(id.to_string());
                }
            }
            Some("turn.started") => self.codex_counted = false,
            Some("item.completed") => match event.pointer("/item/type").and_then(Value::as_str) {
                Some("agent_message" | "reasoning") => {
                    if !self.codex_talking {
                        self.num_turns = Some(self.num_turns.unwrap_or(0) + 1);
                        self.codex_counted = true;
                    }
                    self.codex_talking = true;
                }
                // Codex's own notices, not the model's.
                Some("error") | None => {}
                Some(_) => self.codex_talking = false,
            },
            Some("turn.completed") => {
                if let Some(usage) = event.get("usage") {
                    let input = u(usage, "input_tokens");
                    let cached = u(usage, "cached_input_tokens").unwrap_or(0);
                    let written = u(usage, "cache_write_input_tokens").unwrap_or(0);
                    add(
                        &mut self.input_tokens,
                        input.map(|n| n.saturating_sub(cached).saturating_sub(written)),
                    );
                    add(&mut self.output_tokens, u(usage, "output_tokens"));
                    add(&mut self.cache_read_input_tokens, input.map(|_| cached));
                    add(
                        &mut self.cache_creation_input_tokens,
                        input.map(|_| written),
                    );
                }
                if !self.codex_counted {
                    self.num_turns = Some(self.num_turns.unwrap_or(0) + 1);
                    self.codex_counted = true;
                }
                self.codex_talking = false;
                self.complete = true;
            }
            _ => {}
        }
    }

    /// What the tokens counted so far cost at `price` (`None` before any was counted).
    #[must_use]
    pub fn cost(&self, price: &TokenPrice) -> Option<f64> {
        if self.input_tokens.is_none() && self.output_tokens.is_none() {
            return None;
        }
        // Token counts stay far below 2^53, where an f64 is still exact.
        #[allow(clippy::cast_precision_loss)]
        let n = |v: Option<u64>| v.unwrap_or(0) as f64 / 1e6;
        Some(
            (n(self.input_tokens) + n(self.cache_creation_input_tokens)) * price.input
                + n(self.cache_read_input_tokens) * price.cached_input
                + n(self.output_tokens) * price.output,
        )
    }

    #[must_use]
    pub fn total_tokens(&self) -> Option<u64> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_result_event_sets_the_totals() {
        let mut u = Usage::default();
        u.observe_claude(r#"{"type":"system","subtype":"init","session_id":"s-1"}"#);
        u.observe_claude(
            r#"{"type":"assistant","message":{"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":2,"cache_creation_input_tokens":3}}}"#,
        );
        assert_eq!(u.input_tokens, Some(10));
        assert_eq!(u.cache_read_input_tokens, Some(2));
        assert!(!u.complete);
        u.observe_claude(r#"{"type":"result","subtype":"success","total_cost_usd":0.0123,"num_turns":3,"duration_ms":900,"session_id":"s-1","usage":{"input_tokens":120,"output_tokens":40,"cache_read_input_tokens":7,"cache_creation_input_tokens":11}}"#);
        // Every total is the result's, the cache counts too, not the running sums.
        assert_eq!(u.input_tokens, Some(120));
        assert_eq!(u.output_tokens, Some(40));
        assert_eq!(u.cache_read_input_tokens, Some(7));
        assert_eq!(u.cache_creation_input_tokens, Some(11));
        assert_eq!(u.total_cost_usd, Some(0.0123));
        assert_eq!(u.num_turns, Some(3));
        assert_eq!(u.session_id.as_deref(), Some("s-1"));
        assert!(u.complete);
    }

    #[test]
    fn codex_turns_are_summed_with_cached_input_apart() {
        let mut u = Usage::default();
        u.observe_codex(r#"{"type":"thread.started","thread_id":"t-9"}"#);
        u.observe_codex(r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":20,"cache_write_input_tokens":5,"output_tokens":30}}"#);
        u.observe_codex(r#"{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":10}}"#);
        assert_eq!(
            (u.input_tokens, u.output_tokens, u.cache_read_input_tokens),
            (Some(125), Some(40), Some(20))
        );
        assert_eq!(u.cache_creation_input_tokens, Some(5));
        assert_eq!(u.session_id.as_deref(), Some("t-9"));
        assert_eq!(u.total_cost_usd, None);
        assert!(u.complete);
    }

    #[test]
    fn codex_responses_are_counted_by_the_model_talking() {
        let mut u = Usage::default();
        let item =
            |kind: &str| format!(r#"{{"type":"item.completed","item":{{"type":"{kind}"}}}}"#);
        u.observe_codex(r#"{"type":"turn.started"}"#);
        u.observe_codex(&item("error"));
        // Response 1: reasoning and a message, then two tool calls.
        for kind in [
            "reasoning",
            "agent_message",
            "command_execution",
            "mcp_tool_call",
        ] {
            u.observe_codex(&item(kind));
        }
        // Response 2: a message and a tool call; response 3: the final message.
        for kind in ["agent_message", "command_execution", "agent_message"] {
            u.observe_codex(&item(kind));
        }
        assert_eq!(u.num_turns, Some(3));
        u.observe_codex(r#"{"type":"turn.completed","usage":{"input_tokens":1}}"#);
        assert_eq!(u.num_turns, Some(3));
        // A Codex turn with nothing said still took one response.
        u.observe_codex(r#"{"type":"turn.started"}"#);
        u.observe_codex(r#"{"type":"turn.completed","usage":{"input_tokens":1}}"#);
        assert_eq!(u.num_turns, Some(4));
    }

    #[test]
    fn cost_is_priced_per_kind_of_token() {
        let mut u = Usage::default();
        assert_eq!(u.cost(&TokenPrice::parse("1,0.1,10").unwrap()), None);
        u.observe_codex(r#"{"type":"turn.completed","usage":{"input_tokens":3000000,"cached_input_tokens":1000000,"output_tokens":1000000}}"#);
        let cost = u.cost(&TokenPrice::parse(" 1, 0.1 ,10").unwrap()).unwrap();
        assert!((cost - 12.1).abs() < 1e-9, "{cost}");
        for bad in ["", "1,2", "1,2,3,4", "1,-2,3", "1,x,3", "1,inf,3"] {
            assert_eq!(TokenPrice::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn garbage_lines_change_nothing() {
        let mut u = Usage::default();
        u.observe_claude("not json");
        u.observe_codex("{\"type\": 3}");
        assert_eq!(u, Usage::default());
    }
}
