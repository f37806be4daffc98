//! Named size caps (X-CAP-1..9): every input over its cap is refused naming the file or
//! field, the cap, its value and the `ANVIL_MAX_<NAME>` variable that raises it, and nothing
//! is written; a malformed override is an error naming the variable.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use anvil_bench::case::proposal::DocErrorKind;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::probe::{cli, refused, run, snapshot};
use crate::support::{UNIT_TARGET, World, proposal_refused};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "hostile::an_air_over_doc_bytes_is_refused_at_open_naming_the_cap",
            rules: &["X-CAP-1", "X-OPEN-1"],
            run: air_over_doc_bytes,
        },
        Check {
            name: "hostile::an_air_description_over_air_text_bytes_never_reaches_case_json",
            rules: &["X-CAP-2", "X-OPEN-1"],
            run: description_over_text_cap,
        },
        Check {
            name: "hostile::an_excerpt_over_excerpt_bytes_is_refused_and_the_run_is_unchanged",
            rules: &["X-CAP-3"],
            run: excerpt_over_cap,
        },
        Check {
            name: "hostile::a_rationale_over_rationale_bytes_is_rejected_at_validate",
            rules: &["X-CAP-4", "R-PARSE-7"],
            run: rationale_over_cap,
        },
        Check {
            name: "hostile::a_tool_request_over_tool_request_bytes_is_refused_from_a_file_and_from_endless_stdin",
            rules: &["X-CAP-5", "R-TOOL-5"],
            run: request_over_cap,
        },
        Check {
            name: "hostile::replay_model_answers_a_body_over_replay_body_bytes_with_413_naming_the_cap",
            rules: &["X-CAP-6"],
            run: replay_body_over_cap,
        },
        Check {
            name: "hostile::mcp_serve_answers_a_line_over_mcp_line_bytes_and_keeps_serving",
            rules: &["X-CAP-7"],
            run: mcp_line_over_cap,
        },
        Check {
            name: "hostile::an_external_source_uri_or_finalize_reason_over_note_bytes_is_refused_naming_the_field",
            rules: &["X-CAP-9"],
            run: notes_over_cap,
        },
        Check {
            name: "hostile::an_external_excerpt_holding_a_nul_byte_is_refused_as_binary",
            rules: &["R-EV-4"],
            run: nul_in_external_excerpt,
        },
        Check {
            name: "hostile::a_cap_override_that_is_not_a_positive_number_is_an_error_naming_it",
            rules: &["X-CAP-8"],
            run: malformed_override,
        },
    ]
}

fn open_args(w: &World) -> Vec<String> {
    [
        "case",
        "open",
        "--air",
        w.air().to_str().unwrap(),
        "--repo",
        w.repo().to_str().unwrap(),
        "--skill",
        "annotate-unit",
        "--target",
        UNIT_TARGET,
        "--cases-dir",
        w.cases().to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// Fails unless the `--json` error document on stdout has `kind` and exit code 1.
fn error_kind(out: &std::process::Output, kind: &str) -> Result<(), Failed> {
    let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    ensure!(
        doc["error"]["kind"] == kind && doc["error"]["exitCode"] == 1,
        "expected a `{kind}` error document, got: {doc}"
    );
    Ok(())
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn air_over_doc_bytes() -> Result<(), Failed> {
    let w = World::new();
    let size = std::fs::metadata(w.air()).unwrap().len();
    ensure!(size > 512, "fixture: the AIR is only {size} bytes");
    let before = snapshot(w.root());
    let args = open_args(&w);
    let env = [("ANVIL_MAX_DOC_BYTES", "512")];
    let out = run(w.root(), &strs(&args), &env, Stdio::null())?;
    refused(
        &out,
        &[
            w.air().to_str().unwrap(),
            &format!("is {size} bytes"),
            "DOC_BYTES cap of 512 bytes",
            "ANVIL_MAX_DOC_BYTES=",
        ],
    )?;
    ensure!(
        snapshot(w.root()) == before,
        "a refused open wrote something"
    );
    // Raised, the same AIR opens: the cap is what refused it.
    let env = [("ANVIL_MAX_DOC_BYTES", "1000000")];
    let out = run(w.root(), &strs(&args), &env, Stdio::null())?;
    ensure!(
        out.status.success(),
        "a raised cap still refused: {:?}",
        out
    );
    Ok(())
}

fn description_over_text_cap() -> Result<(), Failed> {
    let w = World::new();
    let cap = anvil_bench::limits::Limit::AirTextBytes.default_value() as usize;
    w.edit_air(|air| {
        air["operations"][0]["fields"][2]["description"] = json!("x".repeat(cap + 1));
    });
    let before = snapshot(w.root());
    let out = cli(w.root(), &strs(&open_args(&w)))?;
    let err = refused(
        &out,
        &[
            "operations[0].fields[2].description",
            &format!("is {} bytes", cap + 1),
            &format!("AIR_TEXT_BYTES cap of {cap} bytes"),
            "ANVIL_MAX_AIR_TEXT_BYTES=",
        ],
    )?;
    ensure!(
        err.len() < 2000,
        "the refusal echoes the text: {} bytes",
        err.len()
    );
    ensure!(
        snapshot(w.root()) == before,
        "a refused open wrote something"
    );
    Ok(())
}

fn excerpt_over_cap() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = w.open_unit()?.run_dir;
    let file = w.root().join("excerpt.txt");
    std::fs::write(&file, "capture_timeout is in seconds\n").unwrap();
    let before = snapshot(w.root());
    let args = [
        "case",
        "add-external-evidence",
        run_dir.to_str().unwrap(),
        "--source",
        "vendor-docs",
        "--uri",
        "https://vendor.example/x",
        "--excerpt-file",
        file.to_str().unwrap(),
        "--json",
    ];
    let out = run(
        w.root(),
        &args,
        &[("ANVIL_MAX_EXCERPT_BYTES", "16")],
        Stdio::null(),
    )?;
    refused(
        &out,
        &[
            file.to_str().unwrap(),
            "--excerpt-file",
            "EXCERPT_BYTES cap of 16 bytes",
            "ANVIL_MAX_EXCERPT_BYTES=",
        ],
    )?;
    error_kind(&out, "too_large")?;
    ensure!(
        snapshot(w.root()) == before,
        "a refused excerpt changed the world"
    );
    Ok(())
}

/// The texts a rail records as given (an external source and uri, a finalize reason) are
/// held to NOTE_BYTES: refused before the rail, naming the field and the cap without
/// echoing the text, and nothing is written.
fn notes_over_cap() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = w.open_unit()?.run_dir;
    let run_dir = run_dir.to_str().unwrap();
    let file = w.root().join("excerpt.txt");
    std::fs::write(&file, "capture_timeout is in seconds\n").unwrap();
    let cap = anvil_bench::limits::Limit::NoteBytes.default_value() as usize;
    let big = "u".repeat(cap + 1);
    let external = |source: &str, uri: &str| {
        [
            "case",
            "add-external-evidence",
            run_dir,
            "--source",
            source,
            "--uri",
            uri,
            "--excerpt-file",
            file.to_str().unwrap(),
            "--json",
        ]
        .map(String::from)
        .to_vec()
    };
    let finalize = [
        "case",
        "finalize",
        run_dir,
        "--status",
        "insufficient_evidence",
        "--reason",
        &big,
        "--json",
    ]
    .map(String::from)
    .to_vec();
    for (field, args) in [
        ("source", external(&big, "https://vendor.example/x")),
        ("uri", external("vendor-docs", &big)),
        ("reason", finalize),
    ] {
        let before = snapshot(w.root());
        let out = cli(w.root(), &strs(&args))?;
        let err = refused(
            &out,
            &[
                &format!("`{field}`"),
                &format!("is {} bytes", cap + 1),
                &format!("NOTE_BYTES cap of {cap} bytes"),
                "ANVIL_MAX_NOTE_BYTES=",
            ],
        )?;
        error_kind(&out, "too_large")?;
        ensure!(
            err.len() < 2000,
            "the refusal of `{field}` echoes the text: {} bytes",
            err.len()
        );
        ensure!(
            snapshot(w.root()) == before,
            "a refused `{field}` changed the world"
        );
    }
    Ok(())
}

/// A repository file holding a NUL byte is binary, not evidence; an external excerpt
/// holding one is refused by the same rule, and no artifact is stored.
fn nul_in_external_excerpt() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = w.open_unit()?.run_dir;
    let file = w.root().join("excerpt.txt");
    std::fs::write(&file, "capture_timeout\0 is in seconds\n").unwrap();
    let args = [
        "case",
        "add-external-evidence",
        run_dir.to_str().unwrap(),
        "--source",
        "vendor-docs",
        "--uri",
        "https://vendor.example/x",
        "--excerpt-file",
        file.to_str().unwrap(),
        "--json",
    ];
    let out = cli(w.root(), &args)?;
    refused(&out, &["NUL byte at offset 15"])?;
    error_kind(&out, "binary_file")?;
    ensure!(
        !run_dir.join("output/evidence.json").exists(),
        "an artifact was stored"
    );
    Ok(())
}

fn rationale_over_cap() -> Result<(), Failed> {
    let cap = anvil_bench::limits::Limit::RationaleBytes.default_value() as usize;
    let d = proposal_refused(
        |p| p["rationale"] = json!("r".repeat(cap + 1)),
        "rationale",
        DocErrorKind::TooLarge,
    )?;
    ensure!(
        d.reason
            .contains(&format!("RATIONALE_BYTES cap of {cap} bytes"))
            && d.reason.contains("ANVIL_MAX_RATIONALE_BYTES="),
        "the rejection does not name the cap: {d}"
    );
    Ok(())
}

fn request_over_cap() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = w.open_unit()?.run_dir;
    let request = json!({"format": "anvil-tool-request", "formatVersion": 1, "requests": [
        {"requestId": "a", "operation": "source.list_files", "arguments": {"offset": 0, "limit": 5}}]});
    let file = w.root().join("req.json");
    std::fs::write(&file, request.to_string()).unwrap();
    let before = snapshot(w.root());
    let args = [
        "case",
        "query",
        run_dir.to_str().unwrap(),
        "--request",
        file.to_str().unwrap(),
        "--json",
    ];
    let out = run(
        w.root(),
        &args,
        &[("ANVIL_MAX_TOOL_REQUEST_BYTES", "64")],
        Stdio::null(),
    )?;
    refused(
        &out,
        &[
            file.to_str().unwrap(),
            "TOOL_REQUEST_BYTES cap of 64 bytes",
            "ANVIL_MAX_TOOL_REQUEST_BYTES=",
        ],
    )?;
    error_kind(&out, "request_too_large")?;
    // An endless stdin is refused one byte past the default cap, not read to its end.
    let zero = std::fs::File::open("/dev/zero").map_err(|e| e.to_string())?;
    let args = [
        "case",
        "query",
        run_dir.to_str().unwrap(),
        "--request",
        "-",
        "--json",
    ];
    let out = run(w.root(), &args, &[], Stdio::from(zero))?;
    refused(
        &out,
        &["TOOL_REQUEST_BYTES", "ANVIL_MAX_TOOL_REQUEST_BYTES="],
    )?;
    error_kind(&out, "request_too_large")?;
    ensure!(
        snapshot(w.root()) == before,
        "a refused request changed the world"
    );
    Ok(())
}

fn replay_body_over_cap() -> Result<(), Failed> {
    let w = World::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args([
            "replay-model",
            "--exit-on-stdin-eof",
            "--policy",
            "heuristic",
        ])
        .env("ANVIL_MAX_REPLAY_BODY_BYTES", "1000")
        .current_dir(w.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdin = child.stdin.take();
    let mut line = String::new();
    let read = BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
    let answer = |body: &str| -> Result<String, Failed> {
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .ok_or_else(|| format!("unexpected first line {line:?} ({read:?})"))?;
        let mut s = TcpStream::connect(addr).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(super::probe::DEADLINE)).unwrap();
        write!(
            s,
            "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .map_err(|e| e.to_string())?;
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        Ok(reply)
    };
    let big = json!({"model": "m", "messages": [{"role": "user", "content": "x".repeat(2000)}]});
    let over = answer(&big.to_string());
    let small = answer(&json!({"model": "m", "messages": []}).to_string());
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let over = over?;
    ensure!(
        over.starts_with("HTTP/1.1 413")
            && over.contains("request_too_large")
            && over.contains("REPLAY_BODY_BYTES cap of 1000 bytes")
            && over.contains("ANVIL_MAX_REPLAY_BODY_BYTES="),
        "an over-cap body got: {over}"
    );
    let small = small?;
    ensure!(
        small.starts_with("HTTP/1.1 200"),
        "a small body after it got: {small}"
    );
    Ok(())
}

fn mcp_line_over_cap() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = w.open_unit()?.run_dir;
    let mut child = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(["mcp", "serve", "--run"])
        .arg(&run_dir)
        .env("ANVIL_MAX_MCP_LINE_BYTES", "256")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let long =
        json!({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"pad": "p".repeat(1000)}});
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let sent = writeln!(stdin, "{long}").and_then(|()| writeln!(stdin, "{init}"));
    let first = lines.next();
    let second = lines.next();
    drop(stdin);
    let _ = child.wait();
    sent.map_err(|e| e.to_string())?;
    let parse = |l: Option<std::io::Result<String>>| -> Result<Value, Failed> {
        let l = l
            .ok_or("the server closed its output")?
            .map_err(|e| e.to_string())?;
        serde_json::from_str(&l).map_err(|e| format!("not JSON: {e}: {l}").into())
    };
    let first = parse(first)?;
    let message = first["error"]["message"].as_str().unwrap_or_default();
    ensure!(
        first["error"]["code"] == -32600
            && first["id"].is_null()
            && message.contains("MCP_LINE_BYTES cap of 256 bytes")
            && message.contains("ANVIL_MAX_MCP_LINE_BYTES="),
        "the over-long line got: {first}"
    );
    let second = parse(second)?;
    ensure!(
        second["id"] == 1 && second["result"]["serverInfo"]["name"] == "anvil-bench",
        "the server stopped serving after the long line: {second}"
    );
    Ok(())
}

fn malformed_override() -> Result<(), Failed> {
    let w = World::new();
    let before = snapshot(w.root());
    let args = open_args(&w);
    for value in ["abc", "0", "64M", "-1", " 5", "1e6", ""] {
        let env = [("ANVIL_MAX_DOC_BYTES", value)];
        let out = run(w.root(), &strs(&args), &env, Stdio::null())?;
        refused(&out, &["`ANVIL_MAX_DOC_BYTES`", &format!("is `{value}`")])
            .map_err(|e| format!("ANVIL_MAX_DOC_BYTES={value:?}: {}", crate::support::msg(&e)))?;
        ensure!(
            snapshot(w.root()) == before,
            "a refused open wrote something"
        );
    }
    // Where a cap is read at start-up, a bad override stops the server before it serves.
    let run_dir = w.open_unit()?.run_dir;
    let args = ["mcp", "serve", "--run", run_dir.to_str().unwrap()];
    let out = run(
        w.root(),
        &args,
        &[("ANVIL_MAX_MCP_LINE_BYTES", "0")],
        Stdio::null(),
    )?;
    refused(&out, &["`ANVIL_MAX_MCP_LINE_BYTES`", "zero"])?;
    Ok(())
}
