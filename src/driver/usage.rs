//! Token and cost accounting parsed from an agent's own output.
//!
//! Invariant: numbers come only from what the agent printed; a field it did not report
//! stays `None` rather than being guessed.

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

    /// Folds one line of `codex exec --json` output: `turn.completed` events carry the
    /// turn's usage, which is summed.
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
            Some("turn.completed") => {
                if let Some(usage) = event.get("usage") {
                    add(&mut self.input_tokens, u(usage, "input_tokens"));
                    add(&mut self.output_tokens, u(usage, "output_tokens"));
                    add(
                        &mut self.cache_read_input_tokens,
                        u(usage, "cached_input_tokens"),
                    );
                }
                self.num_turns = Some(self.num_turns.unwrap_or(0) + 1);
                self.complete = true;
            }
            _ => {}
        }
    }

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
            r#"{"type":"assistant","message":{"usage":{"input_tokens":10,"output_tokens":5}}}"#,
        );
        assert_eq!(u.input_tokens, Some(10));
        assert!(!u.complete);
        u.observe_claude(r#"{"type":"result","subtype":"success","total_cost_usd":0.0123,"num_turns":3,"duration_ms":900,"session_id":"s-1","usage":{"input_tokens":120,"output_tokens":40,"cache_read_input_tokens":7}}"#);
        assert_eq!(u.input_tokens, Some(120));
        assert_eq!(u.output_tokens, Some(40));
        assert_eq!(u.cache_read_input_tokens, Some(7));
        assert_eq!(u.total_cost_usd, Some(0.0123));
        assert_eq!(u.num_turns, Some(3));
        assert_eq!(u.session_id.as_deref(), Some("s-1"));
        assert!(u.complete);
    }

    #[test]
    fn codex_turns_are_summed() {
        let mut u = Usage::default();
        u.observe_codex(r#"{"type":"thread.started","thread_id":"t-9"}"#);
        u.observe_codex(r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":20,"output_tokens":30}}"#);
        u.observe_codex(r#"{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":10}}"#);
        assert_eq!(
            (u.input_tokens, u.output_tokens, u.cache_read_input_tokens),
            (Some(150), Some(40), Some(20))
        );
        assert_eq!(u.session_id.as_deref(), Some("t-9"));
        assert_eq!(u.total_cost_usd, None);
    }

    #[test]
    fn garbage_lines_change_nothing() {
        let mut u = Usage::default();
        u.observe_claude("not json");
        u.observe_codex("{\"type\": 3}");
        assert_eq!(u, Usage::default());
    }
}
