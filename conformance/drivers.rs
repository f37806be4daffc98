//! The agent process runner and the child's environment: streaming as output arrives,
//! process-group kill on timeout and cancellation, actionable failures, timestamps, and the
//! environment allowlist (R-DRV-1, 2, 3, 4; R-CON-5).
//!
//! Every trial that waits on a child has a timeout, so a broken runner fails the trial
//! instead of hanging the suite.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, SystemTime};

use anvil_bench::driver::env::{allowlisted_env, ambient, home_overrides, is_allowed};
use anvil_bench::process::{
    CancelHandle, ExecutionRecord, LogLine, Outcome, ProcessSpec, RunnerError, Stream, run_blocking,
};
use libtest_mimic::Failed;

use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "runner::a_line_reaches_the_callback_and_the_log_while_the_child_still_runs",
            rules: &["R-DRV-1"],
            run: streams_while_running,
        },
        Check {
            name: "runner::stdout_and_stderr_arrive_as_tagged_lines",
            rules: &["R-DRV-1"],
            run: tagged_lines,
        },
        Check {
            name: "runner::a_timeout_kills_the_whole_process_group",
            rules: &["R-DRV-2"],
            run: timeout_kills_group,
        },
        Check {
            name: "runner::cancellation_kills_the_whole_process_group",
            rules: &["R-DRV-2"],
            run: cancel_kills_group,
        },
        Check {
            name: "runner::a_missing_program_is_named_with_how_to_install_it",
            rules: &["R-DRV-3"],
            run: missing_program,
        },
        Check {
            name: "runner::a_program_without_execute_permission_is_refused_as_not_executable",
            rules: &["R-DRV-3"],
            run: not_executable,
        },
        Check {
            name: "runner::a_non_zero_exit_gives_the_code_and_the_last_stderr_lines",
            rules: &["R-DRV-3"],
            run: non_zero_exit,
        },
        Check {
            name: "runner::death_by_signal_gives_the_signal_and_the_last_stderr_lines",
            rules: &["R-DRV-3"],
            run: killed_by_signal,
        },
        Check {
            name: "runner::the_record_has_ordered_start_and_end_times_and_a_consistent_duration",
            rules: &["R-DRV-4"],
            run: timestamps,
        },
        Check {
            name: "env::the_child_sees_exactly_the_allowlisted_environment",
            rules: &["R-CON-5"],
            run: child_sees_allowlist_only,
        },
        Check {
            name: "env::patterns_match_exact_names_and_prefixes_and_a_bare_star_matches_nothing",
            rules: &["R-CON-5"],
            run: allowlist_patterns,
        },
    ]
}

const SH_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// `sh -c script` in `dir`, with only PATH set, a 10 s cap and no log.
fn sh(dir: &Path, script: &str) -> ProcessSpec {
    ProcessSpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: dir.to_path_buf(),
        env: BTreeMap::from([("PATH".to_string(), SH_PATH.to_string())]),
        timeout: Duration::from_secs(10),
        install_hint: None,
        log_path: None,
    }
}

fn with_env(mut spec: ProcessSpec, name: &str, path: &Path) -> ProcessSpec {
    spec.env
        .insert(name.into(), path.to_string_lossy().into_owned());
    spec
}

fn run(spec: &ProcessSpec) -> Result<ExecutionRecord, Failed> {
    run_blocking(spec, &CancelHandle::new(), |_| {}).map_err(|e| Failed::from(e.to_string()))
}

fn texts(record: &ExecutionRecord, stream: Stream) -> Vec<&str> {
    record
        .lines
        .iter()
        .filter(|l| l.stream == stream)
        .map(|l| l.text.as_str())
        .collect()
}

fn read_log(path: &Path) -> Vec<LogLine> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn streams_while_running() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let marker = dir.path().join("marker");
    let log = dir.path().join("execution.jsonl");
    // The child only finishes once the marker exists, and only on_line creates it: a runner
    // that buffers until exit never calls on_line in time, and the 10 s cap fails the trial.
    let script = r#"echo ready; while [ ! -e "$MARKER" ]; do sleep 0.02; done; echo after"#;
    let mut spec = with_env(sh(dir.path(), script), "MARKER", &marker);
    spec.log_path = Some(log.clone());
    let mut logged_before_callback = None;
    let record = run_blocking(&spec, &CancelHandle::new(), |line| {
        if line.text == "ready" && logged_before_callback.is_none() {
            logged_before_callback = Some(read_log(&log).iter().any(|l| l.text == "ready"));
            let _ = std::fs::write(&marker, b"");
        }
    })?;
    ensure!(
        record.outcome == Outcome::Completed,
        "the run ended {:?} instead of completing: the first line did not reach on_line while the child ran",
        record.outcome
    );
    ensure!(
        logged_before_callback == Some(true),
        "the line was not in the execution log when on_line saw it"
    );
    ensure!(
        texts(&record, Stream::Stdout) == ["ready", "after"],
        "stdout lines: {:?}",
        record.lines
    );
    let logged: Vec<String> = read_log(&log).into_iter().map(|l| l.text).collect();
    ensure!(
        logged == ["ready", "after"],
        "execution log holds {logged:?}"
    );
    let first = std::fs::read_to_string(&log)?;
    let first: serde_json::Value = serde_json::from_str(first.lines().next().unwrap_or(""))?;
    ensure!(
        first["stream"] == "stdout" && first["at"].is_string() && first["text"] == "ready",
        "log line is not {{stream, at, text}}: {first}"
    );
    Ok(())
}

fn tagged_lines() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let script = r"printf 'a\nb\r\n'; printf 'e1\ne2\n' >&2; printf 'unterminated'";
    let record = run(&sh(dir.path(), script))?;
    ensure!(
        texts(&record, Stream::Stdout) == ["a", "b", "unterminated"],
        "stdout lines: {:?}",
        texts(&record, Stream::Stdout)
    );
    ensure!(
        texts(&record, Stream::Stderr) == ["e1", "e2"],
        "stderr lines: {:?}",
        texts(&record, Stream::Stderr)
    );
    Ok(())
}

/// Whether `pid` names a live process. A zombie is dead: it only waits for its parent (or
/// an init that may never reap it) to collect its status.
fn alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    {
        return false;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    !matches!(state, None | Some('Z' | 'X'))
}

/// Fails, killing the leftovers, unless every pid written to `pids` is gone within 3 s.
fn all_gone(pids: &Path) -> Result<(), Failed> {
    let pids: Vec<i32> = std::fs::read_to_string(pids)?
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    ensure!(
        pids.len() == 2,
        "the child wrote pids {pids:?}, expected two"
    );
    let until = std::time::Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|p| alive(*p)) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    if !left.is_empty() {
        // Clean up after a failure: the child led the group, so its pid is the group id.
        // SAFETY: kill(2) takes plain integers; these ids belong to this trial's child.
        unsafe {
            libc::kill(-pids[0], libc::SIGKILL);
            for pid in &left {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
    }
    ensure!(
        left.is_empty(),
        "processes {left:?} of the run's group were still running after it returned"
    );
    Ok(())
}

/// The child writes its own pid and a grandchild's, says `started`, then sleeps.
const FORKS: &str =
    r#"echo $$ > "$PIDS"; sleep 100 & echo $! >> "$PIDS"; echo started; exec sleep 100"#;

fn timeout_kills_group() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let pids = dir.path().join("pids");
    let mut spec = with_env(sh(dir.path(), FORKS), "PIDS", &pids);
    spec.timeout = Duration::from_millis(500);
    let record = run(&spec)?;
    ensure!(
        record.outcome == Outcome::TimedOut,
        "outcome {:?}",
        record.outcome
    );
    all_gone(&pids)?;
    // The grandchild holds the output pipe: only a group kill lets the run end promptly.
    ensure!(
        record.duration_ms < 4000,
        "the run took {} ms after a 500 ms timeout",
        record.duration_ms
    );
    let message = record.failure_message().unwrap_or_default();
    ensure!(
        message.starts_with("`sh` timed out after 0.5s and its process group was killed"),
        "failure message: {message}"
    );
    Ok(())
}

fn cancel_kills_group() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let pids = dir.path().join("pids");
    let mut spec = with_env(sh(dir.path(), FORKS), "PIDS", &pids);
    spec.timeout = Duration::from_secs(30);
    let cancel = CancelHandle::new();
    let from_elsewhere = cancel.clone();
    let record = run_blocking(&spec, &cancel, move |line| {
        if line.text == "started" {
            let handle = from_elsewhere.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                handle.cancel();
            });
        }
    })?;
    ensure!(
        record.outcome == Outcome::Cancelled,
        "outcome {:?}",
        record.outcome
    );
    all_gone(&pids)?;
    ensure!(
        record.duration_ms < 10_000,
        "the run took {} ms after cancellation",
        record.duration_ms
    );
    let message = record.failure_message().unwrap_or_default();
    ensure!(
        message.starts_with("`sh` was cancelled and its process group was killed"),
        "failure message: {message}"
    );
    Ok(())
}

fn expect_err(spec: &ProcessSpec) -> Result<RunnerError, Failed> {
    match run_blocking(spec, &CancelHandle::new(), |_| {}) {
        Ok(record) => Err(format!("`{}` ran: {:?}", spec.program, record.outcome).into()),
        Err(e) => Ok(e),
    }
}

fn missing_program() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let mut spec = sh(dir.path(), "");
    spec.program = "anvil-no-such-agent".into();
    spec.install_hint = Some("npm i -g @anthropic-ai/claude-code".into());
    let err = expect_err(&spec)?;
    ensure!(err.kind() == "program_not_found", "kind {}", err.kind());
    ensure!(
        err.to_string()
            == "`anvil-no-such-agent` not found on PATH; install with npm i -g @anthropic-ai/claude-code",
        "message: {err}"
    );
    spec.install_hint = None;
    let err = expect_err(&spec)?;
    ensure!(
        err.to_string() == "`anvil-no-such-agent` not found on PATH",
        "message without a hint: {err}"
    );
    // The child's PATH is the one searched, not the engine's.
    spec.program = "sh".into();
    spec.env
        .insert("PATH".into(), dir.path().display().to_string());
    let err = expect_err(&spec)?;
    ensure!(
        err.to_string() == "`sh` not found on PATH",
        "lookup ignored the child's PATH: {err}"
    );
    spec.program = "./bin/agent".into();
    let err = expect_err(&spec)?;
    ensure!(
        err.kind() == "program_not_found" && err.to_string() == "`./bin/agent` not found",
        "missing path: {err}"
    );
    Ok(())
}

fn not_executable() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let agent = dir.path().join("agent");
    std::fs::write(&agent, "#!/bin/sh\necho hi\n")?;
    let mut spec = sh(dir.path(), "");
    spec.program = agent.display().to_string();
    spec.args.clear();
    let err = expect_err(&spec)?;
    ensure!(
        err.kind() == "program_not_executable",
        "kind {}: {err}",
        err.kind()
    );
    ensure!(
        err.to_string().contains(&format!("`{}`", agent.display())),
        "message does not name the file: {err}"
    );
    Ok(())
}

/// The failure message's quoted stderr lines.
fn quoted_tail(message: &str) -> Vec<&str> {
    message
        .split_once("; last stderr lines:\n")
        .map(|(_, tail)| tail.lines().map(str::trim).collect())
        .unwrap_or_default()
}

fn non_zero_exit() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let script =
        r#"i=1; while [ $i -le 15 ]; do echo "err $i" >&2; i=$((i+1)); done; echo out; exit 3"#;
    let record = run(&sh(dir.path(), script))?;
    ensure!(
        record.outcome == Outcome::Failed && record.exit_code == Some(3) && record.signal.is_none(),
        "outcome {:?}, exit code {:?}, signal {:?}",
        record.outcome,
        record.exit_code,
        record.signal
    );
    let message = record.failure_message().unwrap_or_default();
    ensure!(
        message.starts_with("`sh` exited with code 3; last stderr lines:"),
        "failure message: {message}"
    );
    let want: Vec<String> = (6..=15).map(|i| format!("err {i}")).collect();
    ensure!(
        quoted_tail(&message) == want,
        "quoted lines {:?}, expected the last ten stderr lines",
        quoted_tail(&message)
    );
    let ok = run(&sh(dir.path(), "echo fine"))?;
    ensure!(
        ok.outcome == Outcome::Completed && ok.failure_message().is_none(),
        "a clean exit reads as a failure: {:?}",
        ok.failure_message()
    );
    Ok(())
}

fn killed_by_signal() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let record = run(&sh(dir.path(), "echo going down >&2; kill -TERM $$"))?;
    ensure!(
        record.outcome == Outcome::Failed
            && record.signal == Some(libc::SIGTERM)
            && record.exit_code.is_none(),
        "outcome {:?}, exit code {:?}, signal {:?}",
        record.outcome,
        record.exit_code,
        record.signal
    );
    let message = record.failure_message().unwrap_or_default();
    ensure!(
        message.starts_with(&format!(
            "`sh` was killed by signal {} (SIGTERM)",
            libc::SIGTERM
        )) && quoted_tail(&message) == ["going down"],
        "failure message: {message}"
    );
    Ok(())
}

fn parse_time(name: &str, text: &str) -> Result<SystemTime, Failed> {
    // RFC 3339, UTC, milliseconds: 2024-01-02T03:04:05.678Z
    ensure!(
        text.len() == 24 && text.ends_with('Z') && text.as_bytes()[19] == b'.',
        "{name} `{text}` is not RFC 3339 UTC with milliseconds"
    );
    humantime::parse_rfc3339(text).map_err(|e| format!("{name} `{text}`: {e}").into())
}

fn timestamps() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let record = run(&sh(dir.path(), "echo one; sleep 0.3; echo two >&2"))?;
    let start = parse_time("startedAt", &record.started_at)?;
    let end = parse_time("endedAt", &record.ended_at)?;
    let wall = end.duration_since(start).map_err(|_| {
        format!(
            "endedAt {} precedes startedAt {}",
            record.ended_at, record.started_at
        )
    })?;
    ensure!(
        record.duration_ms >= 300,
        "durationMs {} for a child that slept 300 ms",
        record.duration_ms
    );
    let wall_ms = u64::try_from(wall.as_millis()).unwrap_or(u64::MAX);
    ensure!(
        wall_ms.abs_diff(record.duration_ms) <= 100,
        "durationMs {} disagrees with endedAt - startedAt = {wall_ms} ms",
        record.duration_ms
    );
    for line in &record.lines {
        let at = parse_time("a line's at", &line.at)?;
        ensure!(
            start <= at && at <= end,
            "line `{}` at {} lies outside the run",
            line.text,
            line.at
        );
    }
    let json = serde_json::to_value(&record)?;
    for key in ["startedAt", "endedAt", "durationMs", "exitCode", "outcome"] {
        ensure!(json.get(key).is_some(), "the record has no `{key}`: {json}");
    }
    ensure!(
        json["outcome"] == "completed",
        "outcome {}",
        json["outcome"]
    );
    Ok(())
}

const AGENT_ALLOW: &[&str] = &["PATH", "LANG", "ANTHROPIC_*"];

fn child_sees_allowlist_only() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("workspace/home");
    // The engine's real environment, plus variables an agent must never see.
    let mut from = ambient();
    from.push(("ANVIL_CONFORMANCE_SECRET".into(), "s3cret".into()));
    from.push(("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into()));
    ensure!(
        from.iter().any(|(name, _)| !is_allowed(name, AGENT_ALLOW)),
        "precondition: the ambient environment has nothing outside the allowlist"
    );
    let overrides = home_overrides(&home).ok_or("temp path is not UTF-8")?;
    let env = allowlisted_env(from, AGENT_ALLOW, overrides.clone());
    ensure!(
        env.keys()
            .all(|k| is_allowed(k, AGENT_ALLOW) || overrides.contains_key(k)),
        "allowlisted_env let through {:?}",
        env.keys().collect::<Vec<_>>()
    );
    let spec = ProcessSpec {
        program: "env".into(),
        args: vec!["-0".into()],
        env: env.clone(),
        ..sh(dir.path(), "")
    };
    let record = run(&spec)?;
    ensure!(
        record.outcome == Outcome::Completed,
        "env: {:?}",
        record.failure_message()
    );
    let printed = texts(&record, Stream::Stdout).join("\n");
    let seen: BTreeMap<&str, &str> = printed
        .split('\0')
        .filter(|entry| !entry.is_empty())
        .filter_map(|entry| entry.split_once('='))
        .collect();
    let seen_names: BTreeSet<&str> = seen.keys().copied().collect();
    let want: BTreeSet<&str> = env.keys().map(String::as_str).collect();
    ensure!(
        seen_names == want,
        "the child saw {seen_names:?}, expected exactly {want:?}"
    );
    ensure!(
        seen.get("HOME") == home.to_str().as_ref()
            && seen.get("ANTHROPIC_BASE_URL") == Some(&"http://127.0.0.1:9"),
        "HOME or ANTHROPIC_BASE_URL did not reach the child as set: {seen:?}"
    );
    Ok(())
}

fn allowlist_patterns() -> Result<(), Failed> {
    let ambient: Vec<(String, String)> = [
        ("PATH", "/bin"),
        ("PATHX", "x"),
        ("ANTHROPIC_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", "u"),
        ("ANTHROPICX", "x"),
        // The prefix must start the name: these only contain it.
        ("MY_ANTHROPIC_API_KEY", "m"),
        ("XANTHROPIC_BASE_URL", "x"),
        ("OPENAI_API_KEY", "o"),
        ("AWS_SECRET_ACCESS_KEY", "a"),
        ("HOME", "/root"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let overrides = BTreeMap::from([("HOME".to_string(), "/run/workspace/home".to_string())]);
    let env = allowlisted_env(
        ambient.clone(),
        &["PATH", "HOME", "ANTHROPIC_*", "*"],
        overrides,
    );
    let names: Vec<&str> = env.keys().map(String::as_str).collect();
    ensure!(
        names == ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "HOME", "PATH"],
        "kept {names:?}"
    );
    ensure!(
        env["HOME"] == "/run/workspace/home",
        "an override lost to the ambient value: HOME={}",
        env["HOME"]
    );
    let none = allowlisted_env(ambient, &["*", ""], BTreeMap::new());
    ensure!(none.is_empty(), "`*` or `` let through {none:?}");
    Ok(())
}
