//! Process drivers as configured for real agents: what Claude Code is given, and the
//! accounting read back from its own output (R-DRV-4, X-DRV-1, R-CON-5). A stand-in
//! `claude` on PATH prints stream-json exactly as the real one does, so these trials need
//! no network, no model and no install.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anvil_bench::cli::exit::ToExitCode;
use anvil_bench::driver::{AgentDriver, ClaudeCodeDriver, CodexDriver, ExecutionPolicy};
use anvil_bench::process::CancelHandle;
use anvil_bench::sandbox::Backend;
use libtest_mimic::Failed;

use crate::support::{World, read_json, write_executable};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "driver::claude_code_usage_cost_and_transcript_come_from_its_own_output",
            rules: &["R-DRV-4"],
            run: accounting,
        },
        Check {
            name: "driver::claude_code_gets_the_brief_the_repository_and_a_strict_tool_allowlist",
            rules: &["X-DRV-1"],
            run: claude_args,
        },
        Check {
            name: "driver::claude_code_sees_its_api_variables_and_nothing_else_ambient",
            rules: &["R-CON-5"],
            run: claude_env,
        },
        Check {
            name: "driver::codex_usage_is_summed_from_its_jsonl_events_and_it_runs_in_the_run",
            rules: &["R-DRV-4", "X-DRV-1"],
            run: codex,
        },
        Check {
            name: "driver::codex_gets_its_model_endpoint_the_mcp_rails_and_ours_as_its_only_sandbox",
            rules: &["X-DRV-1"],
            run: codex_config,
        },
    ]
}

/// A stand-in `claude`: records its arguments and environment into output/, then prints a
/// stream-json session with one tool call and a final result event.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
printf '%s\n' "$@" > output/argv.txt
env > output/env.txt
echo '{"type":"system","subtype":"init","session_id":"sess-42"}'
echo '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"grep -rn capture_timeout ."}}],"usage":{"input_tokens":100,"output_tokens":20}}}'
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"src/payments/service.py:36","is_error":false}]}}'
sleep 0.2
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"duration_ms":1234,"session_id":"sess-42","total_cost_usd":0.0421,"usage":{"input_tokens":1500,"output_tokens":300,"cache_creation_input_tokens":50,"cache_read_input_tokens":700}}'
"#;

struct Fake {
    world: World,
    bin: PathBuf,
    run: PathBuf,
}

impl Fake {
    fn handle(&self) -> Result<anvil_bench::case::RunHandle, Failed> {
        anvil_bench::case::RunHandle::open(&self.run).map_err(|e| Failed::from(e.to_string()))
    }
}

fn fake() -> Result<Fake, Failed> {
    let world = World::new();
    let bin = world.root().join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    write_executable(&claude, FAKE_CLAUDE);
    let run = world.open_unit()?.run_dir;
    Ok(Fake { world, bin, run })
}

fn policy(f: &Fake) -> ExecutionPolicy {
    ExecutionPolicy {
        backend: Backend::Native {
            allow_degraded_native: true,
        },
        timeout: Duration::from_mins(1),
        max_turns: Some(7),
        max_budget_usd: Some(0.5),
        model: Some("claude-test-1".into()),
        hidden: vec![],
        ambient: vec![
            ("PATH".into(), format!("{}:/usr/bin:/bin", f.bin.display())),
            ("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into()),
            ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "must-not-leak".into()),
            ("HOME".into(), "/root".into()),
        ],
        engine: PathBuf::from(env!("CARGO_BIN_EXE_anvil-bench")),
    }
}

fn drive(f: &Fake) -> Result<anvil_bench::driver::investigate::InvestigateReport, Failed> {
    let mut progress = |_p: anvil_bench::driver::investigate::Progress| {};
    ClaudeCodeDriver::default()
        .drive(
            &f.handle()?,
            &policy(f),
            &CancelHandle::new(),
            &mut progress,
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn accounting() -> Result<(), Failed> {
    let f = fake()?;
    let report = drive(&f)?;
    ensure!(
        report.exit_code() == 0,
        "exit {} ({:?})",
        report.exit_code(),
        report.failure
    );
    let exec = read_json(&f.run.join("execution.json"));
    let u = &exec["usage"];
    ensure!(
        u["inputTokens"] == 1500 && u["outputTokens"] == 300,
        "tokens: {u}"
    );
    ensure!(
        u["cacheReadInputTokens"] == 700 && u["cacheCreationInputTokens"] == 50,
        "cache tokens: {u}"
    );
    ensure!(
        u["totalCostUsd"] == 0.0421 && u["numTurns"] == 2 && u["durationMs"] == 1234,
        "cost/turns: {u}"
    );
    ensure!(
        u["sessionId"] == "sess-42" && u["complete"] == true,
        "session: {u}"
    );
    let t = exec["transcript"].as_array().ok_or("no transcript")?;
    let kinds: Vec<&str> = t.iter().filter_map(|e| e["kind"].as_str()).collect();
    ensure!(
        kinds == ["text", "tool_call", "tool_result"],
        "transcript kinds {kinds:?}"
    );
    ensure!(
        t[1]["name"] == "Bash" && t[2]["content"] == "src/payments/service.py:36",
        "transcript: {t:?}"
    );
    let started = humantime::parse_rfc3339(exec["record"]["startedAt"].as_str().unwrap_or(""))
        .map_err(|e| Failed::from(e.to_string()))?;
    let ended = humantime::parse_rfc3339(exec["record"]["endedAt"].as_str().unwrap_or(""))
        .map_err(|e| Failed::from(e.to_string()))?;
    ensure!(ended >= started, "ended before it started");
    // The log was streamed to its own file too.
    let log = std::fs::read_to_string(f.run.join("execution.log.jsonl")).unwrap_or_default();
    ensure!(
        log.lines().count() >= 4,
        "execution.log.jsonl has {} lines",
        log.lines().count()
    );
    Ok(())
}

fn argv(run: &Path) -> Vec<String> {
    std::fs::read_to_string(run.join("output/argv.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn claude_args() -> Result<(), Failed> {
    let f = fake()?;
    drive(&f)?;
    let args = argv(&f.run);
    let after = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let brief = std::fs::read_to_string(f.run.join("CASE.md")).unwrap();
    // argv.txt holds one argument per line: the brief spans many; compare its first line.
    ensure!(
        after("-p").as_deref() == brief.lines().next(),
        "the prompt is not CASE.md"
    );
    ensure!(
        after("--output-format").as_deref() == Some("stream-json")
            && args.contains(&"--verbose".to_string()),
        "not stream-json: {args:?}"
    );
    ensure!(
        after("--permission-mode").as_deref() == Some("acceptEdits"),
        "permission mode: {:?}",
        after("--permission-mode")
    );
    ensure!(
        !args.iter().any(|a| a == "--dangerously-skip-permissions"),
        "skips permissions"
    );
    let repo = std::fs::canonicalize(f.world.repo()).unwrap();
    ensure!(
        after("--add-dir").as_deref() == repo.to_str(),
        "--add-dir is {:?}",
        after("--add-dir")
    );
    ensure!(
        after("--max-turns").as_deref() == Some("7")
            && after("--max-budget-usd").as_deref() == Some("0.5"),
        "limits not passed"
    );
    ensure!(
        after("--model").as_deref() == Some("claude-test-1"),
        "model not passed"
    );
    let i = args
        .iter()
        .position(|a| a == "--allowedTools")
        .ok_or("no --allowedTools")?;
    let tools = &args[i + 1..];
    ensure!(
        tools.iter().any(|t| t == "mcp__anvil__*")
            && args.contains(&"--strict-mcp-config".to_string())
            && f.run
                .join(after("--mcp-config").unwrap_or_default())
                .is_file(),
        "rails not allowed as MCP tools: {tools:?}"
    );
    ensure!(
        !tools
            .iter()
            .any(|t| t.starts_with("Bash") || t == "Edit" || t == "WebFetch"),
        "an unrestricted tool is allowed: {tools:?}"
    );
    Ok(())
}

fn claude_env() -> Result<(), Failed> {
    let f = fake()?;
    drive(&f)?;
    let env = std::fs::read_to_string(f.run.join("output/env.txt")).unwrap_or_default();
    let var = |name: &str| {
        env.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .map(str::to_string)
    };
    ensure!(
        var("ANTHROPIC_BASE_URL").as_deref() == Some("http://127.0.0.1:9"),
        "ANTHROPIC_BASE_URL not passed"
    );
    ensure!(
        var("ANTHROPIC_API_KEY").as_deref() == Some("sk-test"),
        "ANTHROPIC_API_KEY not passed"
    );
    ensure!(
        var("AWS_SECRET_ACCESS_KEY").is_none(),
        "an ambient secret leaked into the agent"
    );
    let home = var("HOME").unwrap_or_default();
    ensure!(
        home.starts_with(f.run.join("workspace").to_str().unwrap_or("?"))
            || home.contains("/workspace/"),
        "HOME is {home}, not inside workspace/"
    );
    let path = var("PATH").unwrap_or_default();
    let engine_dir = Path::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .parent()
        .unwrap();
    ensure!(
        path.starts_with(engine_dir.to_str().unwrap()),
        "the engine is not first on PATH: {path}"
    );
    Ok(())
}

/// A stand-in `codex`: the first events are as the real `codex exec --json` 0.171 printed
/// them here (thread.started, turn.started, an error, an item); the turn.completed lines
/// follow its documented shape.
const FAKE_CODEX: &str = r#"#!/bin/sh
printf '%s\n' "$@" > output/argv.txt
echo '{"type":"thread.started","thread_id":"01a22a97-7218-7cd1-b8ac-c9a41a98654a"}'
echo '{"type":"turn.started"}'
echo '{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion)"}'
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Reading the service."}}'
echo '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -c ls","aggregated_output":"CASE.md","exit_code":0,"status":"completed"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":100,"cache_write_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":0}}'
echo '{"type":"turn.started"}'
echo '{"type":"turn.completed","usage":{"input_tokens":400,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":0}}'
"#;

fn codex() -> Result<(), Failed> {
    let f = fake()?;
    let path = f.bin.join("codex");
    write_executable(&path, FAKE_CODEX);
    let mut progress = |_p: anvil_bench::driver::investigate::Progress| {};
    let report = CodexDriver::default()
        .drive(
            &f.handle()?,
            &policy(&f),
            &CancelHandle::new(),
            &mut progress,
        )
        .map_err(|e| Failed::from(e.to_string()))?;
    ensure!(
        report.exit_code() == 0,
        "exit {} ({:?})",
        report.exit_code(),
        report.failure
    );
    let exec = read_json(&f.run.join("execution.json"));
    let u = &exec["usage"];
    // Codex counts cached input inside input_tokens; the record keeps them apart, as
    // Claude Code reports them.
    ensure!(
        u["inputTokens"] == 1200 && u["outputTokens"] == 100 && u["cacheReadInputTokens"] == 100,
        "usage: {u}"
    );
    ensure!(
        u["numTurns"] == 2 && u["sessionId"] == "01a22a97-7218-7cd1-b8ac-c9a41a98654a",
        "turns/session: {u}"
    );
    // Priced at the default rate: 1200 in, 100 cached, 100 out.
    let expected = (1200.0 * 1.25 + 100.0 * 0.125 + 100.0 * 10.0) / 1e6;
    ensure!(
        u["totalCostUsd"]
            .as_f64()
            .is_some_and(|c| (c - expected).abs() < 1e-12)
            && u["complete"] == true,
        "cost: {u}"
    );
    let kinds: Vec<&str> = exec["transcript"]
        .as_array()
        .map(|t| t.iter().filter_map(|e| e["kind"].as_str()).collect())
        .unwrap_or_default();
    ensure!(
        kinds == ["text", "tool_call", "tool_result"],
        "transcript kinds {kinds:?}"
    );
    let args = argv(&f.run);
    ensure!(
        args.first().map(String::as_str) == Some("exec") && args.contains(&"--json".to_string()),
        "not `exec --json`: {args:?}"
    );
    let cd = args
        .iter()
        .position(|a| a == "--cd")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_default();
    ensure!(
        std::fs::canonicalize(&cd).ok() == std::fs::canonicalize(&f.run).ok(),
        "--cd is {cd}, not the run"
    );
    let sandbox = args
        .iter()
        .position(|a| a == "--sandbox")
        .and_then(|i| args.get(i + 1))
        .cloned();
    ensure!(
        sandbox.as_deref() == Some("workspace-write"),
        "natively codex must keep its own sandbox: {args:?}"
    );
    ensure!(
        !args.iter().any(|a| a.starts_with("--dangerously")),
        "natively codex must not bypass its sandbox"
    );
    Ok(())
}

/// What `codex` is told, from the command the driver builds: with `OPENAI_BASE_URL` a
/// Responses provider of its own at that URL (`/v1` added), the `anvil` MCP server for this
/// run, no user configuration; under bubblewrap its own sandbox off, ours containing it.
fn codex_config() -> Result<(), Failed> {
    use anvil_bench::driver::ProcessAgent;
    let f = fake()?;
    let run = crate::support::rails::load_run(&f.run).map_err(|e| Failed::from(e.to_string()))?;
    let mut p = policy(&f);
    p.ambient.extend([
        (
            "OPENAI_BASE_URL".to_string(),
            "http://127.0.0.1:9".to_string(),
        ),
        ("OPENAI_API_KEY".to_string(), "sk-test".to_string()),
    ]);
    p.model = Some("replay".into());
    p.backend = Backend::Bubblewrap;
    let cmd = CodexDriver::default().command(&run, &p);
    let args = &cmd.args;
    let configs: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "-c")
        .map(|w| w[1].as_str())
        .collect();
    for want in [
        r#"model_provider="anvil""#,
        r#"model_providers.anvil.base_url="http://127.0.0.1:9/v1""#,
        r#"model_providers.anvil.wire_api="responses""#,
        r#"model_providers.anvil.env_key="OPENAI_API_KEY""#,
        "analytics.enabled=false",
    ] {
        ensure!(configs.contains(&want), "no `-c {want}` in {configs:?}");
    }
    ensure!(
        configs
            .iter()
            .any(|c| c.starts_with("mcp_servers.anvil.args=") && c.contains("\"serve\"")),
        "no anvil MCP server: {configs:?}"
    );
    let after = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    ensure!(
        after("--sandbox").as_deref() == Some("danger-full-access")
            && after("--model").as_deref() == Some("replay"),
        "under bubblewrap: {args:?}"
    );
    ensure!(
        args.contains(&"--ignore-user-config".to_string())
            && args.contains(&"--ephemeral".to_string()),
        "user configuration not ignored: {args:?}"
    );
    ensure!(
        args.len() >= 2
            && args[args.len() - 2] == "--"
            && args[args.len() - 1].contains("`add_claim`"),
        "the brief (after `--`) does not name the MCP rails"
    );
    // Without an endpoint Codex keeps its own provider.
    let plain = CodexDriver::default().command(&run, &policy(&f));
    ensure!(
        !plain.args.iter().any(|a| a.starts_with("model_provider")),
        "a provider without OPENAI_BASE_URL: {:?}",
        plain.args
    );
    Ok(())
}
