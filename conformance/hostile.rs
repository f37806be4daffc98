//! Hostile input the engine must refuse by name or survive quietly: a key given twice in
//! a document (X-DUP-1), a reader that hangs up early (X-PIPE-1), inputs over their named
//! caps (X-CAP-*, in `hostile/caps.rs`), input files that are FIFOs, devices or symlinks
//! (X-FIFO-*, `hostile/special.rs`) and outputs aimed at them (X-OUT-*, `hostile/outputs.rs`).

mod caps;
mod outputs;
mod probe;
mod special;

use std::io::Read;
use std::process::{Command, Stdio};

use libtest_mimic::Failed;
use serde_json::json;

use crate::support::{World, bytes_of, frozen_unit, unit_proposal};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    let mut all = vec![
        Check {
            name: "hostile::a_proposal_with_a_key_given_twice_is_rejected_naming_it",
            rules: &["X-DUP-1", "R-PARSE-7"],
            run: duplicate_in_proposal,
        },
        Check {
            name: "hostile::an_air_with_a_key_given_twice_is_refused_at_open",
            rules: &["X-DUP-1", "X-OPEN-1"],
            run: duplicate_in_air,
        },
        Check {
            name: "hostile::a_tool_request_with_a_key_given_twice_is_refused",
            rules: &["X-DUP-1"],
            run: duplicate_in_request,
        },
        Check {
            name: "hostile::mcp_serve_answers_a_line_that_is_not_json_with_a_parse_error_and_keeps_serving",
            rules: &["X-MCP-1"],
            run: mcp_parse_error,
        },
        Check {
            name: "hostile::a_reader_closing_the_pipe_early_ends_a_query_quietly",
            rules: &["X-PIPE-1"],
            run: broken_pipe,
        },
    ];
    all.extend(caps::checks());
    all.extend(special::checks());
    all.extend(outputs::checks());
    all
}

fn duplicate_in_proposal() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let p = unit_proposal("s", &[&u.claim]);
    // `"unit": "ms"` first, then the value the validator would see last.
    let text = serde_json::to_string_pretty(&p).unwrap().replacen(
        "\"unit\": \"s\"",
        "\"unit\": \"ms\", \"unit\": \"s\"",
        1,
    );
    ensure!(
        text.contains("\"unit\": \"ms\""),
        "fixture: no unit to repeat"
    );
    std::fs::write(u.run.join("output/proposal.json"), &text).unwrap();
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    let err = match crate::support::rails::validate(&u.run, None, false) {
        Ok(r) => return Err(format!("a proposal with `unit` twice validated: {r:?}").into()),
        Err(e) => e.to_string(),
    };
    ensure!(
        err.contains("patch.set.unit") && err.contains("duplicate"),
        "the refusal does not name the repeated key: {err}"
    );
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc,
        "a rejected proposal changed lifecycle.json"
    );
    Ok(())
}

fn duplicate_in_air() -> Result<(), Failed> {
    let w = World::new();
    let text = std::fs::read_to_string(w.air()).unwrap();
    // A second `airVersion` ahead of the real one: a lenient parser keeps the last.
    let twice = text.replacen('{', "{\"airVersion\": 2, ", 1);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    ensure!(
        v.get("airVersion").is_some(),
        "fixture: the AIR has no airVersion"
    );
    std::fs::write(w.air(), twice).unwrap();
    let before = crate::support::tree(&w.cases());
    let out = w.cli(&[
        "case",
        "open",
        "--air",
        w.air().to_str().unwrap(),
        "--repo",
        w.repo().to_str().unwrap(),
        "--skill",
        "annotate-unit",
        "--target",
        "op.create_payment.input.body.capture_timeout",
        "--cases-dir",
        w.cases().to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    ensure!(
        out.status.code() == Some(1) && err.contains("airVersion") && err.contains("duplicate"),
        "exit {:?}: {err}",
        out.status.code()
    );
    ensure!(
        crate::support::tree(&w.cases()) == before,
        "a refused open changed the cases dir"
    );
    Ok(())
}

fn duplicate_in_request() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let request = r#"{"format": "anvil-tool-request", "formatVersion": 1, "requests": [
        {"requestId": "a", "operation": "source.list_files", "arguments": {"offset": 0, "limit": 5, "limit": 500}}]}"#;
    let file = w.root().join("req.json");
    std::fs::write(&file, request).unwrap();
    let out = w.cli(&[
        "case",
        "query",
        run.to_str().unwrap(),
        "--request",
        file.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    ensure!(
        out.status.code() == Some(1) && err.contains("limit") && err.contains("duplicate"),
        "exit {:?}: {err}",
        out.status.code()
    );
    Ok(())
}

fn mcp_parse_error() -> Result<(), Failed> {
    use std::io::{BufRead, BufReader, Write};
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let mut child = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(["mcp", "serve", "--run"])
        .arg(&run)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let sent = writeln!(stdin, "{{not json").and_then(|()| writeln!(stdin, "{init}"));
    let first = lines.next();
    let second = lines.next();
    drop(stdin);
    let _ = child.wait();
    sent.map_err(|e| e.to_string())?;
    let parse = |l: Option<std::io::Result<String>>| -> Result<serde_json::Value, Failed> {
        let l = l
            .ok_or("the server closed its output")?
            .map_err(|e| e.to_string())?;
        serde_json::from_str(&l).map_err(|e| format!("not JSON: {e}: {l}").into())
    };
    let first = parse(first)?;
    ensure!(
        first["error"]["code"] == -32700 && first["id"].is_null(),
        "the first reply is not a JSON-RPC parse error: {first}"
    );
    let second = parse(second)?;
    ensure!(
        second["id"] == 1 && second["result"]["serverInfo"]["name"] == "anvil-bench",
        "the server stopped serving after the bad line: {second}"
    );
    Ok(())
}

fn broken_pipe() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let request = json!({"format": "anvil-tool-request", "formatVersion": 1, "requests": [
        {"requestId": "a", "operation": "source.list_files", "arguments": {"offset": 0, "limit": 50}}]});
    let file = w.root().join("req.json");
    std::fs::write(&file, request.to_string()).unwrap();
    // Read one byte of the JSON and hang up, as `| head -c1` does.
    let mut child = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(["case", "query"])
        .arg(&run)
        .arg("--request")
        .arg(&file)
        .arg("--json")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    let read = stdout.read_exact(&mut one);
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    read.map_err(|e| format!("no output to read: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    ensure!(
        !err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("backtrace"),
        "a closed pipe made the command panic: {err}"
    );
    Ok(())
}
