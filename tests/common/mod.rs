//! Helpers shared by the integration test crates that drive the real binary: running the
//! CLI, opening a case on the bundled example, reading its result, a `replay-model`
//! server, and finding (or skipping for want of) tools on PATH.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_anvil-bench");

pub fn cli(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The bundled example in `dir` and a freshly opened run; returns the run directory.
pub fn open_case(dir: &Path, skill: &str, target: &str) -> PathBuf {
    let cases = dir.join("cases");
    let run = cli(
        dir,
        &[
            "case",
            "open",
            "--air",
            "air.json",
            "--repo",
            "repo",
            "--skill",
            skill,
            "--target",
            target,
            "--cases-dir",
            cases.to_str().unwrap(),
        ],
    );
    PathBuf::from(run)
}

pub fn result_of(run: &Path) -> Value {
    let text = std::fs::read_to_string(run.join("output/result.json"))
        .unwrap_or_else(|e| panic!("no result.json in {}: {e}", run.display()));
    serde_json::from_str(&text).unwrap()
}

/// A running `replay-model`: its URL, and its stdin (dropping it stops the server).
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    pub url: String,
    pub first_line: String,
}

impl Server {
    pub fn start(extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["replay-model", "--exit-on-stdin-eof"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .map(str::to_string)
            .or_else(|| {
                serde_json::from_str::<Value>(&line).ok()?["url"]
                    .as_str()
                    .map(str::to_string)
            })
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
        Server {
            stdin: child.stdin.take(),
            child,
            url,
            first_line: line,
        }
    }

    /// Closes stdin and waits (bounded) for a clean exit.
    pub fn stop(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("replay-model did not exit after its stdin closed");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The real tools (`claude`, `codex`, `bwrap`), or a reason to skip (never a skip in CI).
pub fn tools_or_skip(tools: &[&str]) -> bool {
    let missing: Vec<&&str> = tools.iter().filter(|t| find_on_path(t).is_none()).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{missing:?} not on PATH: .ci/run installs them (apt bubblewrap, npm @anthropic-ai/claude-code and @openai/codex)"
    );
    eprintln!("skipped: {missing:?} not on PATH");
    false
}
