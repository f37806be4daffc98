//! No parser panics: every document the engine parses from bytes an agent or an operator
//! controls returns `Ok` or a typed error for any input — never a panic, never a stack
//! overflow (a 10 000-level nesting is refused, not recursed into).
//!
//! Inputs per document type: arbitrary bytes, and structured mutations of a valid document
//! (truncated, a byte flipped, a key repeated, deep nesting spliced in, a huge number, invalid
//! UTF-8). Each type runs `PROPTEST_CASES` cases; unset, [`CI_CASES`] (10 000, about 30 s for
//! all 22 types in a debug build on two cores) when `CI=true`, else [`DEFAULT_CASES`] (1 000,
//! about 3 s) so a developer's `cargo test` stays quick. The long run:
//!
//! ```text
//! PROPTEST_CASES=1000000 cargo test --release --test no_panic
//! ```

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anvil_bench::air::Air;
use anvil_bench::air::openapi::{self, Document};
use anvil_bench::battery::workspace::copy_tree;
use anvil_bench::case::proposal::parse_proposal;
use anvil_bench::case::validate::Critique;
use anvil_bench::case::{CaseDoc, RunHandle, lifecycle::Lifecycle, rail, store};
use anvil_bench::driver::scripted::{Agent, ScriptDoc, ScriptedAgentDriver};
use anvil_bench::json_path::parse_versioned;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

/// Cases per document type when `PROPTEST_CASES` is not set, on a developer machine.
const DEFAULT_CASES: u32 = 1_000;

/// Cases per document type when `PROPTEST_CASES` is not set and `CI=true`.
const CI_CASES: u32 = 10_000;

/// Nesting depth of the deep-nesting inputs.
const DEEP: usize = 10_000;

fn cases() -> u32 {
    match std::env::var("PROPTEST_CASES") {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("PROPTEST_CASES={v:?} is not a number")),
        Err(_) if std::env::var("CI").is_ok_and(|v| v == "true") => CI_CASES,
        Err(_) => DEFAULT_CASES,
    }
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(manifest_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

// ---- inputs -------------------------------------------------------------------------------

/// One way of damaging a valid document.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(usize, u8),
    /// Repeats the member that starts at the first `"` at or after the position.
    DuplicateKey(usize),
    /// Opens 10 000 arrays or objects at the position.
    Nest(usize, bool),
    HugeNumber(usize, &'static str),
    InvalidUtf8(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        at.prop_map(Mutation::Truncate),
        (at, 1..=255u8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        at.prop_map(Mutation::DuplicateKey),
        (at, any::<bool>()).prop_map(|(i, obj)| Mutation::Nest(i, obj)),
        (
            at,
            prop::sample::select(vec![
                "1e999999",
                "-1e999999",
                "18446744073709551616",
                "-9223372036854775809",
                "123456789012345678901234567890123456789",
                "0.0000000000000000000000000000000000000001e-400",
                "NaN",
                "4294967296",
            ])
        )
            .prop_map(|(i, n)| Mutation::HugeNumber(i, n)),
        (
            at,
            prop::sample::select(vec![
                vec![0xff],
                vec![0xc0, 0x80],
                vec![0xed, 0xa0, 0x80],
                vec![0xf4, 0x90, 0x80, 0x80],
                vec![0xe2, 0x82],
            ])
        )
            .prop_map(|(i, b)| Mutation::InvalidUtf8(i, b)),
    ]
}

fn deep(object: bool) -> Vec<u8> {
    let (open, close) = if object { ("{\"a\":", "}") } else { ("[", "]") };
    let mut out = open.repeat(DEEP);
    out.push('1');
    out.push_str(&close.repeat(DEEP));
    out.into_bytes()
}

fn apply(seed: &[u8], m: &Mutation) -> Vec<u8> {
    let pos = |i: usize| {
        if seed.is_empty() {
            0
        } else {
            i % (seed.len() + 1)
        }
    };
    let splice = |i: usize, insert: &[u8], remove: usize| {
        let at = pos(i);
        let end = (at + remove).min(seed.len());
        [&seed[..at], insert, &seed[end..]].concat()
    };
    match m {
        Mutation::Truncate(i) => seed[..pos(*i)].to_vec(),
        Mutation::Flip(i, b) if !seed.is_empty() => {
            let mut out = seed.to_vec();
            out[i % seed.len()] ^= b;
            out
        }
        Mutation::Flip(..) => seed.to_vec(),
        Mutation::DuplicateKey(i) => {
            let from = pos(*i);
            let Some(start) = seed[from..]
                .iter()
                .position(|&b| b == b'"')
                .map(|s| s + from)
            else {
                return seed.to_vec();
            };
            // The member runs to the next `,` or `}` at this level (roughly: good enough
            // to repeat `"key": value` for scalars and to damage the rest).
            let end = seed[start..]
                .iter()
                .position(|&b| b == b',' || b == b'}' || b == b'\n')
                .map_or(seed.len(), |e| e + start);
            let member = &seed[start..end];
            [&seed[..start], member, b",", &seed[start..]].concat()
        }
        Mutation::Nest(i, object) => splice(*i, &deep(*object), 0),
        Mutation::HugeNumber(i, n) => {
            let from = pos(*i);
            match seed[from..].iter().position(u8::is_ascii_digit) {
                Some(d) => {
                    let at = from + d;
                    let len = seed[at..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'-'))
                        .count();
                    [&seed[..at], n.as_bytes(), &seed[at + len..]].concat()
                }
                None => splice(*i, n.as_bytes(), 0),
            }
        }
        Mutation::InvalidUtf8(i, b) => splice(*i, b, 0),
    }
}

/// Arbitrary bytes, or a mutation of `seed` (one to three at once).
fn input(seed: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let arbitrary = prop::collection::vec(any::<u8>(), 0..512);
    let mutated = prop::collection::vec(mutation(), 1..=3)
        .prop_map(move |ms| ms.iter().fold(seed.clone(), |doc, m| apply(&doc, m)));
    prop_oneof![1 => arbitrary, 4 => mutated]
}

/// Runs `parse` on [`cases`] inputs derived from `seed`; a panic fails the test with the
/// (shrunk) input. The seed itself must parse, so the mutations start from a real document,
/// and 10 000-level nestings must be refused.
fn no_panic(name: &str, seed: Vec<u8>, parse: impl Fn(&[u8]) -> bool) {
    assert!(parse(&seed), "{name}: the seed document does not parse");
    for object in [false, true] {
        assert!(
            !parse(&deep(object)),
            "{name}: a {DEEP}-level nesting was accepted"
        );
    }
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&input(seed), |bytes| {
            let _ = parse(&bytes);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
}

fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// A scratch directory for readers that take a path; `write` puts `bytes` at `rel`.
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Scratch {
        Scratch(tempfile::tempdir().unwrap())
    }
    fn dir(&self) -> &Path {
        self.0.path()
    }
    fn write(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

// ---- a real run, for the run documents ------------------------------------------------------

/// A finalized unit run on the bundled example (kept for the whole test process).
fn run_dir() -> &'static Path {
    static RUN: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &RUN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        // The project's copier makes its destination itself.
        std::fs::remove_dir(dir.path()).unwrap();
        copy_tree(&manifest_dir().join("examples/payments"), dir.path()).unwrap();
        let req = anvil_bench::case::OpenRequest {
            air: dir.path().join("air.json"),
            repo: dir.path().join("repo"),
            skill: "annotate-unit".into(),
            target: "op.create_payment.input.body.capture_timeout".into(),
            deficiency: None,
            cases_dir: dir.path().join("cases"),
            executor: "no_panic".into(),
            scopes: vec![],
            mode: anvil_bench::case::OpenMode::New,
            tool_limits: vec![],
            snapshots: vec![],
        };
        let opened = anvil_bench::case::open(&req).unwrap();
        ScriptedAgentDriver::new("seed", |agent: &Agent| {
            let ev = agent.add_evidence("src/payments/service.py", Some((32, 39)))?;
            let claim = agent.add_claim("field.unit", json!("s"), &[&ev], 0.9)?;
            agent.freeze_research()?;
            agent.propose(json!("s"), &[&claim], "trial")?;
            agent.validate()?;
            agent.finalize(None, None)?;
            Ok(())
        })
        .run(&RunHandle::open(&opened.run_dir).unwrap())
        .unwrap();
        (dir, opened.run_dir)
    })
    .1
}

fn run_file(rel: &str) -> Vec<u8> {
    std::fs::read(run_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn case_doc() -> CaseDoc {
    RunHandle::open(run_dir()).unwrap().into_run().doc
}

// ---- AIR and OpenAPI ------------------------------------------------------------------------

#[test]
fn air_json() {
    no_panic("air.json", fixture("examples/payments/air.json"), |b| {
        text(b).is_some_and(|t| Air::parse(t, false, "air.json").is_ok())
    });
}

#[test]
fn air_yaml() {
    let value: Value = serde_json::from_slice(&fixture("examples/payments/air.json")).unwrap();
    let seed = serde_yaml_ng::to_string(&value).unwrap().into_bytes();
    no_panic("air.yaml", seed, |b| {
        text(b).is_some_and(|t| Air::parse(t, true, "air.yaml").is_ok())
    });
}

fn openapi_import(b: &[u8]) -> bool {
    let Some(t) = text(b) else { return false };
    Document::parse(t.to_string(), "spec")
        .and_then(|doc| openapi::import(&doc))
        .is_ok()
}

#[test]
fn openapi_json() {
    no_panic(
        "openapi json",
        fixture("tests/fixtures/openapi/widgets-3.0.json"),
        openapi_import,
    );
}

#[test]
fn openapi_yaml() {
    no_panic(
        "openapi yaml",
        fixture("tests/fixtures/openapi/swagger-2.0-orders.yaml"),
        openapi_import,
    );
}

// ---- run documents ------------------------------------------------------------------------

#[test]
fn case_json() {
    let s = Scratch::new();
    // A run directory is named by its run id.
    let name = run_dir().file_name().unwrap().to_str().unwrap();
    let rel = format!("{name}/case.json");
    no_panic("case.json", run_file("case.json"), |b| {
        s.write(&rel, b);
        RunHandle::open(&s.dir().join(name)).is_ok()
    });
}

#[test]
fn lifecycle_json() {
    let s = Scratch::new();
    no_panic("lifecycle.json", run_file("lifecycle.json"), |b| {
        Lifecycle::parse(b, &s.dir().join("lifecycle.json")).is_ok()
    });
}

#[test]
fn evidence_json() {
    let s = Scratch::new();
    no_panic("evidence.json", run_file(store::EVIDENCE_JSON), |b| {
        s.write(store::EVIDENCE_JSON, b);
        store::evidence(s.dir()).is_ok()
    });
}

#[test]
fn claims_json() {
    let s = Scratch::new();
    no_panic("claims.json", run_file(store::CLAIMS_JSON), |b| {
        s.write(store::CLAIMS_JSON, b);
        store::claims(s.dir()).is_ok()
    });
}

#[test]
fn critique_json() {
    let s = Scratch::new();
    no_panic("critique.json", run_file(store::CRITIQUE_JSON), |b| {
        s.write(store::CRITIQUE_JSON, b);
        store::read_doc::<Critique>(s.dir(), store::CRITIQUE_JSON).is_ok_and(|d| d.is_some())
    });
}

#[test]
fn proposal_json() {
    let case = case_doc();
    no_panic("proposal.json", run_file(store::PROPOSAL_JSON), |b| {
        parse_proposal(b, &case, store::PROPOSAL_JSON).is_ok()
    });
}

#[test]
fn journal_lines() {
    let s = Scratch::new();
    no_panic("journal.jsonl", run_file("journal.jsonl"), |b| {
        s.write("journal.jsonl", b);
        // A torn (unparseable) last line is ignored by design: accepted means records.
        rail::read_journal(s.dir()).is_ok_and(|entries| !entries.is_empty())
    });
}

// ---- the corpus and the battery -------------------------------------------------------------

#[test]
fn label() {
    use anvil_bench::battery::corpus::{FORMAT_VERSION, LABEL_FORMAT, LabelDoc};
    no_panic(
        "label",
        fixture("labels-private/conflicting/billing-address.json"),
        |b| parse_versioned::<LabelDoc>(b, LABEL_FORMAT, FORMAT_VERSION).is_ok(),
    );
}

#[test]
fn scenario_metadata() {
    use anvil_bench::battery::corpus::{FORMAT_VERSION, SCENARIO_FORMAT, ScenarioDoc};
    no_panic(
        "scenario.json",
        fixture("scenarios/conflicting/discount-field/scenario.json"),
        |b| parse_versioned::<ScenarioDoc>(b, SCENARIO_FORMAT, FORMAT_VERSION).is_ok(),
    );
}

/// reports/example/results.json cut to two trials, so a case stays cheap.
fn small_results() -> Value {
    let mut doc: Value = serde_json::from_slice(&fixture("reports/example/results.json")).unwrap();
    doc["trials"].as_array_mut().unwrap().truncate(2);
    doc
}

#[test]
fn battery_results() {
    use anvil_bench::battery::results::{FORMAT_VERSION, RESULTS_FORMAT, ResultsDoc};
    let seed = serde_json::to_vec_pretty(&small_results()).unwrap();
    no_panic("results.json", seed, |b| {
        parse_versioned::<ResultsDoc>(b, RESULTS_FORMAT, FORMAT_VERSION).is_ok()
    });
}

#[test]
fn battery_trial_record() {
    use anvil_bench::battery::results::{FORMAT_VERSION, TRIAL_FORMAT, TrialRecord};
    let seed = serde_json::to_vec_pretty(&small_results()["trials"][0]).unwrap();
    no_panic("trial record", seed, |b| {
        parse_versioned::<TrialRecord>(b, TRIAL_FORMAT, FORMAT_VERSION).is_ok()
    });
}

#[test]
fn battery_manifest() {
    let s = Scratch::new();
    let seed = json!({"format": "anvil-battery-manifest", "formatVersion": 1,
        "manifest": small_results()["manifest"]});
    no_panic("manifest", serde_json::to_vec_pretty(&seed).unwrap(), |b| {
        let file = s.write("manifest.json", b);
        anvil_bench::battery::runner::read_manifest(&file).is_ok()
    });
}

// ---- scripts, the replay model, MCP and tool requests ---------------------------------------

#[test]
fn anvil_script() {
    let seed = json!({
        "format": "anvil-script", "formatVersion": 1,
        "steps": [
            {"addEvidence": {"path": "src/payments/service.py", "startLine": 45, "endLine": 47}},
            {"addClaim": {"predicate": "error.retryable", "value": false, "artifacts": ["@0"], "confidence": 0.9}},
            {"freezeResearch": {}},
            {"propose": {"value": false, "claims": ["@1"], "rationale": "a decline is final"}},
            {"validate": {}},
            {"finalize": {}}
        ]
    });
    no_panic(
        "anvil-script",
        serde_json::to_vec_pretty(&seed).unwrap(),
        |b| ScriptDoc::parse(b, Path::new("script.json")).is_ok(),
    );
}

fn replay_script_seed() -> Value {
    let tool = |name: &str, input: Value| json!({"content": [{"type": "tool_use", "name": name, "input": input}]});
    json!({"format": "anvil-replay-script", "formatVersion": 1, "turns": [
        tool("mcp__anvil__source_find_text", json!({"text": "capture_timeout"})),
        tool("Bash", json!({"command": "echo {{result.0|\"(\\w+)\"}}"})),
        {"content": [{"type": "text", "text": "done: {{result.1}}"}]}
    ]})
}

#[test]
fn replay_script() {
    let seed = serde_json::to_vec_pretty(&replay_script_seed()).unwrap();
    no_panic("anvil-replay-script", seed, |b| {
        text(b).is_some_and(|t| anvil_bench::replay::Script::parse(t).is_ok())
    });
}

/// A Messages API request body with tools offered and a tool result in its history.
fn replay_request_seed() -> Value {
    json!({"model": "m", "max_tokens": 1024, "stream": true,
    "tools": [{"name": "Bash", "input_schema": {"type": "object"}},
              {"name": "mcp__anvil__source_find_text", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "# Case\nrun: /tmp/run\n"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
            "input": {"command": "pwd"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
            "content": [{"type": "text", "text": "/tmp/run"}]}]}
    ]})
}

#[test]
fn replay_request_body() {
    let script = anvil_bench::replay::Script::parse(&replay_script_seed().to_string()).unwrap();
    let players = [
        anvil_bench::replay::Player::Heuristic,
        anvil_bench::replay::Player::Script(script),
    ];
    let seed = serde_json::to_vec(&replay_request_seed()).unwrap();
    no_panic("replay request body", seed, |b| {
        // What the server does with a body: JSON first (serde_json: depth-limited), then play.
        let Ok(body) = serde_json::from_slice::<Value>(b) else {
            return false;
        };
        for p in &players {
            let (reply, _) = p.reply(&body, b.len());
            let _ = reply.sse_events();
        }
        true
    });
}

/// A Responses API request body as Codex sends it: namespaced tools, a call and its output.
fn responses_request_seed() -> Value {
    json!({"model": "replay", "stream": true,
    "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
              {"type": "namespace", "name": "mcp__anvil", "tools": [
                  {"type": "function", "name": "source_find_text", "parameters": {}}]}],
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "# Case\nrun: /tmp/run\n"}]},
        {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"pwd\"}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1",
         "output": "Wall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n/tmp/run\n"}
    ]})
}

#[test]
fn replay_responses_body() {
    let script = anvil_bench::replay::Script::parse(&replay_script_seed().to_string()).unwrap();
    let players = [
        anvil_bench::replay::Player::Heuristic,
        anvil_bench::replay::Player::Script(script),
    ];
    let seed = serde_json::to_vec(&responses_request_seed()).unwrap();
    no_panic("responses request body", seed, |b| {
        let Ok(body) = serde_json::from_slice::<Value>(b) else {
            return false;
        };
        for p in &players {
            let (response, _) = p.respond(&body, b.len());
            let _ = response.sse_events();
        }
        true
    });
}

#[test]
fn mcp_lines() {
    use anvil_bench::mcp::args::{RAIL_TOOLS, RailCall};
    use anvil_bench::mcp::lines::{Line, classify};
    let seed = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "add_claim", "arguments": {"predicate": "field.unit", "value": "s",
        "artifactIds": ["ev-0123456789abcdef01234567"], "confidence": 0.9,
        "idempotencyKey": "k"}}});
    no_panic("MCP line", serde_json::to_vec(&seed).unwrap(), |b| {
        let Line::Json(text) = classify(b) else {
            return false;
        };
        // The line reached the protocol: the tool arguments are parsed strictly.
        let v: Value = serde_json::from_str(&text).unwrap();
        let arguments = v["params"]["arguments"].clone();
        let mut ok = false;
        for tool in RAIL_TOOLS {
            ok |= matches!(RailCall::parse(tool.name, arguments.clone()), Some(Ok(_)));
        }
        ok
    });
}

#[test]
fn tool_request() {
    let limits = anvil_bench::tools::ToolLimits::default();
    let seed = json!({"format": "anvil-investigation-request", "formatVersion": 1,
    "runId": "01JZ0000000000000000000000",
    "requests": [
        {"requestId": "a", "operation": "source.find_text",
         "arguments": {"text": "capture", "caseSensitive": true, "offset": 0, "limit": 10}},
        {"requestId": "b", "operation": "database.lookup",
         "arguments": {"table": "payments", "filters": {"id": 1, "state": "captured"},
                       "projection": ["id"], "offset": 0, "limit": 5}},
        {"requestId": "c", "operation": "source.read_context",
         "arguments": {"path": "src/payments/service.py", "startLine": 30, "endLine": 40}}
    ]});
    // The request alone, as every query checks it before it reads anything.
    no_panic("tool request", serde_json::to_vec(&seed).unwrap(), |b| {
        let Ok(value) = anvil_bench::json_path::parse_slice(b) else {
            return false;
        };
        anvil_bench::tools::check_request(&value, &limits).is_ok()
    });
}

#[test]
fn agent_output_lines() {
    use anvil_bench::driver::transcript::claude_events;
    use anvil_bench::driver::usage::Usage;
    let seed = json!({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}},
        {"type": "text", "text": "reading"}],
        "usage": {"input_tokens": 10, "output_tokens": 5}}});
    no_panic(
        "agent output line",
        serde_json::to_vec(&seed).unwrap(),
        |b| {
            let Some(line) = text(b) else { return false };
            let mut usage = Usage::default();
            usage.observe_claude(line);
            usage.observe_codex(line);
            !claude_events(line).is_empty()
        },
    );
}
