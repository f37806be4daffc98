//! The heuristic investigation's moves through the `anvil` MCP server (`anvil-bench mcp
//! serve`, named `anvil`, so Claude Code offers its tools as `mcp__anvil__<tool>`): search
//! with `source_find_text`, read with `source_read_context`, and the rails as tools.
//!
//! Results are the server's text content: pretty JSON on success (the router's
//! `anvil-investigation-result`, or the rail's document), and on a refusal an error whose
//! text starts with the refusal's kind — which a client may wrap (Claude Code shows
//! `<tool_use_error>Error: …</tool_use_error>` for a tool it could not call). Codex does not
//! tell the model that an MCP call failed (the refusal's text arrives as a plain result), so
//! a result that is not the server's JSON is read as a refusal whatever its error flag.
//!
//! Invariant: every mutating call carries a fixed `idempotencyKey` per move, so a retried
//! request replays the saved outcome instead of doing the move twice.

use serde_json::{Value, json};

use super::conversation::ToolResult;
use super::moves::{Action, first_line, id_in};
use crate::driver::mcp_wiring::{claude_tool_name, router_tool_name, tool as rail};
use crate::investigator::plan::{Found, Frozen, Hit, Window};

/// The MCP names of the router operations the plan uses.
const FIND_TEXT: &str = "source.find_text";
const READ_CONTEXT: &str = "source.read_context";

/// The tools the plan needs, as Claude Code names them; the plan goes through MCP only when
/// all of them are offered. Built once: every request asks.
#[must_use]
pub fn tools_used() -> &'static [String] {
    static USED: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        [
            router_tool_name(FIND_TEXT),
            router_tool_name(READ_CONTEXT),
            rail::ADD_EVIDENCE.to_string(),
            rail::ADD_CLAIM.to_string(),
            rail::FREEZE_RESEARCH.to_string(),
            rail::VALIDATE.to_string(),
            rail::FINALIZE.to_string(),
        ]
        .iter()
        .map(|t| claude_tool_name(t))
        .collect()
    });
    &USED
}

/// At most this many matches per search (well under the router's default limit of 100).
const MATCHES: u32 = 50;

fn tool(name: &str, input: Value) -> Action {
    Action {
        name: claude_tool_name(name),
        input,
    }
}

/// A rail call; every rail but `show` writes and so carries its move's idempotency key. A
/// finalize with a named status is keyed by it: a refused `supported` or `conflicted` is
/// followed by a decline, which must not replay the refusal.
pub fn rail_call(name: &str, mut args: Value) -> Action {
    if name != rail::SHOW {
        let key = match args.get("status").and_then(Value::as_str) {
            Some(status) => format!("anvil-replay-{name}-{status}"),
            None => format!("anvil-replay-{name}"),
        };
        args["idempotencyKey"] = json!(key);
    }
    tool(name, args)
}

#[must_use]
pub fn find_text(needle: &str) -> Action {
    tool(
        &router_tool_name(FIND_TEXT),
        json!({"text": needle, "caseSensitive": true, "offset": 0, "limit": MATCHES}),
    )
}

#[must_use]
pub fn read_context(w: &Window) -> Action {
    tool(
        &router_tool_name(READ_CONTEXT),
        json!({"path": w.path, "startLine": w.start, "endLine": w.end}),
    )
}

#[must_use]
pub fn add_evidence(path: &str, start: u32, end: u32, n: usize) -> Action {
    rail_call(
        rail::ADD_EVIDENCE,
        json!({"path": path, "startLine": start, "endLine": end}),
    )
    .keyed(&format!("anvil-replay-add_evidence-{n}"))
}

#[must_use]
pub fn add_claim(predicate: &str, value: &Value, artifacts: &[String], n: usize) -> Action {
    rail_call(
        rail::ADD_CLAIM,
        json!({"predicate": predicate, "value": value, "artifactIds": artifacts, "confidence": 0.8}),
    )
    .keyed(&format!("anvil-replay-add_claim-{n}"))
}

impl Action {
    fn keyed(mut self, key: &str) -> Action {
        self.input["idempotencyKey"] = json!(key);
        self
    }
}

/// A successful result's JSON document (the server pretty-prints it; a client may add text
/// around it).
#[must_use]
pub fn json_of(r: &ToolResult) -> Option<Value> {
    if r.is_error {
        return None;
    }
    let text = r.text.trim();
    serde_json::from_str(text).ok().or_else(|| {
        let (start, end) = (text.find('{')?, text.rfind('}')?);
        serde_json::from_str(text.get(start..=end)?).ok()
    })
}

/// The typed result of the router's one-request batch.
fn operation_result(r: &ToolResult) -> Option<Value> {
    let doc = json_of(r)?;
    doc.get("results")?.get(0)?.get("result").cloned()
}

/// Hits of every search, in path and line order without repeats, and the checked files'
/// lengths.
#[must_use]
pub fn found(results: &[ToolResult]) -> Found {
    let mut out = Found::default();
    for r in results {
        let Some(result) = operation_result(r) else {
            continue;
        };
        for m in result["matches"].as_array().into_iter().flatten() {
            if let (Some(path), Some(line)) = (m["path"].as_str(), m["line"].as_u64()) {
                out.hits.push(Hit {
                    path: path.to_string(),
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                });
            }
        }
        for f in result["checkedFiles"].as_array().into_iter().flatten() {
            if let (Some(path), Some(lines)) = (f["path"].as_str(), f["lines"].as_u64()) {
                out.lengths
                    .push((path.to_string(), u32::try_from(lines).unwrap_or(u32::MAX)));
            }
        }
    }
    out.hits
        .sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    out.hits.dedup();
    out.lengths.sort();
    out.lengths.dedup();
    if !results.is_empty() && results.iter().all(|r| operation_result(r).is_none()) {
        out.failed = Some(summary(&results[0]));
    }
    out
}

/// The lines of `w` in a `source_read_context` result, without trailing blank lines.
#[must_use]
pub fn context_lines(r: &ToolResult, w: &Window) -> Vec<(u32, String)> {
    let Some(result) = operation_result(r) else {
        return vec![];
    };
    let mut lines: Vec<(u32, String)> = result["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| {
            let n = u32::try_from(l["line"].as_u64()?).ok()?;
            let text = l["text"].as_str()?;
            (w.start..=w.end)
                .contains(&n)
                .then(|| (n, text.to_string()))
        })
        .collect();
    while lines.last().is_some_and(|(_, t)| t.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// The `id` of the artifact or claim a rail created: from its document, or a result that
/// is the id alone — never an id a refusal's text mentions.
pub fn id(r: &ToolResult, prefix: &str) -> Option<String> {
    match json_of(r) {
        Some(doc) => doc["id"]
            .as_str()
            .filter(|id| id.starts_with(prefix) && id.len() > prefix.len())
            .map(str::to_string),
        None => id_in(r, prefix).filter(|id| r.text.trim() == id),
    }
}

/// What stage 1 recorded (the research record), or why freezing failed.
///
/// # Errors
///
/// The server's refusal, or a result that is not a research record, in one line.
pub fn frozen(r: &ToolResult) -> Result<Frozen, String> {
    if r.is_error {
        return Err(summary(r));
    }
    let doc = json_of(r).ok_or_else(|| summary(r))?;
    let rejected = doc["claims"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["status"] == "rejected")
        .map(|c| {
            let reasons: Vec<&str> = c["reasons"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            (
                c["id"].as_str().unwrap_or("?").to_string(),
                reasons.join("; "),
            )
        })
        .collect();
    let conflicts = doc["conflicts"].as_array().map_or(0, Vec::len);
    Ok(Frozen {
        rejected,
        conflicts,
    })
}

/// `Err(why)` unless the validation's verdict is `pass`. A failing validation is a
/// result, not a refusal: its failed checks say why.
///
/// # Errors
///
/// The failed checks, or the server's refusal, in one line.
pub fn validated(r: &ToolResult) -> Result<(), String> {
    let doc = json_of(r).ok_or_else(|| summary(r))?;
    if doc["verdict"] == "pass" {
        return Ok(());
    }
    let failed: Vec<String> = doc["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["passed"] == false)
        .map(|c| {
            format!(
                "{}: {}",
                c["id"].as_str().unwrap_or("?"),
                c["detail"].as_str().unwrap_or("")
            )
        })
        .collect();
    Err(format!(
        "verdict {}: {}",
        doc["verdict"].as_str().unwrap_or("unknown"),
        failed.join("; ")
    ))
}

/// One line about a result: a refusal's text without the client's wrapping, or the
/// `status` a finalize recorded.
#[must_use]
pub fn summary(r: &ToolResult) -> String {
    if !r.is_error
        && let Some(status) = json_of(r).and_then(|d| d["status"].as_str().map(str::to_string))
    {
        return status;
    }
    let text = r
        .text
        .replace("<tool_use_error>", "")
        .replace("</tool_use_error>", "");
    let line = first_line(&text);
    line.strip_prefix("Error: ").unwrap_or(&line).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(v: Value) -> ToolResult {
        ToolResult {
            text: serde_json::to_string_pretty(&v).unwrap(),
            is_error: false,
        }
    }

    fn err(text: &str) -> ToolResult {
        ToolResult {
            text: text.into(),
            is_error: true,
        }
    }

    fn batch(result: Value) -> ToolResult {
        ok(
            json!({"format": "anvil-investigation-result", "results": [{"requestId": "Q1", "result": result}]}),
        )
    }

    #[test]
    fn searches_merge_into_sorted_hits_with_file_lengths() {
        let a = batch(json!({"operation": "source.find_text",
            "checkedFiles": [{"path": "b.py", "lines": 9}, {"path": "a.py", "lines": 40}],
            "matches": [{"path": "b.py", "line": 3}, {"path": "a.py", "line": 30}]}));
        let b = batch(json!({"operation": "source.find_text",
            "checkedFiles": [{"path": "a.py", "lines": 40}],
            "matches": [{"path": "a.py", "line": 12}, {"path": "a.py", "line": 30}]}));
        let f = found(&[a, b]);
        let hits: Vec<(&str, u32)> = f.hits.iter().map(|h| (h.path.as_str(), h.line)).collect();
        assert_eq!(hits, [("a.py", 12), ("a.py", 30), ("b.py", 3)]);
        assert_eq!(f.lengths, [("a.py".into(), 40), ("b.py".into(), 9)]);
        assert_eq!(f.failed, None);
        let refused = found(&[err("limit_exceeded: limit 50 is over 20")]);
        assert!(refused.hits.is_empty());
        assert_eq!(
            refused.failed.as_deref(),
            Some("limit_exceeded: limit 50 is over 20")
        );
        // As Codex sends it: not flagged, but no result document either.
        let unflagged = ToolResult {
            text: "limit_exceeded: limit 50 is over 20".into(),
            is_error: false,
        };
        assert_eq!(
            found(&[unflagged]).failed.as_deref(),
            Some("limit_exceeded: limit 50 is over 20")
        );
    }

    #[test]
    fn context_lines_keep_the_window_and_drop_trailing_blanks() {
        let w = Window {
            path: "a.py".into(),
            start: 2,
            end: 4,
            kind: "implementation".into(),
            strength: 0.9,
            prose: false,
            hits: 1,
        };
        let r = batch(json!({"operation": "source.read_context", "lines": [
            {"line": 1, "text": "x"}, {"line": 2, "text": "y"}, {"line": 3, "text": "z"},
            {"line": 4, "text": "  "}]}));
        assert_eq!(
            context_lines(&r, &w),
            [(2, "y".to_string()), (3, "z".to_string())]
        );
        assert!(context_lines(&err("invalid_range: no"), &w).is_empty());
    }

    #[test]
    fn rail_results_are_read_from_their_json() {
        let ev = ok(json!({"id": "ev-04323d", "uri": "repo:a#L1-L2", "kind": "implementation"}));
        assert_eq!(id(&ev, "ev-").as_deref(), Some("ev-04323d"));
        assert_eq!(id(&ev, "cl-"), None);
        assert_eq!(id(&err("rejected_document: ev-1"), "ev-"), None);
        // Regression: Codex sends a refusal as a plain result; an id it names is no answer.
        let refusal = ToolResult {
            text: "unknown_artifact: ev-1 is not in evidence.json".into(),
            is_error: false,
        };
        assert_eq!(id(&refusal, "ev-"), None);

        let record = ok(json!({"claims": [{"id": "cl-1", "status": "accepted"},
            {"id": "cl-2", "status": "rejected", "reasons": ["too weak"]}],
            "conflicts": [{"predicate": "field.unit", "values": []}]}));
        let f = frozen(&record).unwrap();
        assert_eq!(f.rejection("cl-1"), None);
        assert_eq!(f.rejection("cl-2"), Some("too weak"));
        assert_eq!(f.conflicts, 1);
        assert!(frozen(&err("illegal_transition: no")).is_err());

        let pass =
            ok(json!({"verdict": "pass", "checks": [{"id": "a", "passed": true, "detail": ""}]}));
        assert_eq!(validated(&pass), Ok(()));
        let fail = ok(
            json!({"verdict": "fail", "checks": [{"id": "grounding", "passed": false, "detail": "cl-9 unknown"}]}),
        );
        assert_eq!(
            validated(&fail),
            Err("verdict fail: grounding: cl-9 unknown".into())
        );

        assert_eq!(
            summary(&ok(json!({"status": "proposal_generated"}))),
            "proposal_generated"
        );
        assert_eq!(
            summary(&err(
                "<tool_use_error>Error: No such tool available: x</tool_use_error>"
            )),
            "No such tool available: x"
        );
    }

    #[test]
    fn every_mutating_rail_carries_a_fixed_key() {
        let a = add_evidence("src/a.py", 3, 9, 1);
        assert_eq!(a.name, "mcp__anvil__add_evidence");
        assert_eq!(
            a.input,
            json!({"path": "src/a.py", "startLine": 3, "endLine": 9, "idempotencyKey": "anvil-replay-add_evidence-1"})
        );
        let c = add_claim("field.unit", &json!("s"), &["ev-1".into()], 2);
        assert_eq!(c.input["value"], "s");
        assert_eq!(c.input["artifactIds"], json!(["ev-1"]));
        assert_eq!(c.input["idempotencyKey"], "anvil-replay-add_claim-2");
        // A refused `conflicted` is followed by an `insufficient_evidence`: keyed apart.
        let d = rail_call("finalize", json!({"status": "conflicted", "reason": "r"}));
        assert_eq!(
            d.input["idempotencyKey"],
            "anvil-replay-finalize-conflicted"
        );
        let e = rail_call(
            "finalize",
            json!({"status": "insufficient_evidence", "reason": "r"}),
        );
        assert_eq!(
            e.input["idempotencyKey"],
            "anvil-replay-finalize-insufficient_evidence"
        );
        assert_eq!(rail_call("show", json!({})).input, json!({}));
    }
}
