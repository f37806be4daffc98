//! What the CLI refuses, through the real binary: descriptions that would expand without
//! bound, outputs that are inputs or links, a `replay-model` that would listen beyond
//! loopback or die of a closed stderr. Each test names the defect it pins.
//!
//! The expansion bombs run under a small address-space limit (`ulimit -v`), so a loader
//! that expands without bound fails the test by aborting quickly instead of taking the
//! machine's memory.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_anvil-bench");

/// Address space a capped child may use: far below what the bombs expand to, far above
/// what a refusal needs.
const CAPPED_KIB: u64 = 1024 * 1024;

fn petstore() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi/petstore-openapi-3.0.yaml")
}

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `BIN args` under `ulimit -v CAPPED_KIB`.
fn run_capped(dir: &Path, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {CAPPED_KIB} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn refused(out: &Output, code: i32, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{:?}: {stderr}", out.status);
    for n in needles {
        assert!(stderr.contains(n), "no `{n}` in: {stderr}");
    }
}

/// Nested aliases, each repeating the one before nine times: 440 bytes at seven levels.
fn alias_bomb(levels: usize) -> String {
    let mut text = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\n".to_string();
    text.push_str("x-a0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
    for i in 1..=levels {
        let refs = vec![format!("*a{}", i - 1); 9].join(",");
        text.push_str(&format!("x-a{i}: &a{i} [{refs}]\n"));
    }
    text.push_str("paths: {}\n");
    text
}

#[test]
fn a_yaml_alias_bomb_in_a_description_is_refused_naming_the_file_and_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bomb.yaml"), alias_bomb(7)).unwrap();
    std::fs::copy(petstore(), d.join("pet.yaml")).unwrap();
    let air = run(
        d,
        &["air", "import", "pet.yaml", "--out", "pet.air.json"],
        &[],
    );
    assert!(air.status.success());
    for args in [
        &["air", "import", "bomb.yaml"][..],
        &["detect", "--spec", "bomb.yaml"],
        &[
            "air",
            "export",
            "--spec",
            "bomb.yaml",
            "--air",
            "pet.air.json",
        ],
    ] {
        let out = run_capped(d, args);
        refused(&out, 1, &["`bomb.yaml`", "YAML_ALIAS_NODES"]);
    }
    // The cap is the one named: lowered, a small bomb is refused too.
    std::fs::write(d.join("small.yaml"), alias_bomb(3)).unwrap();
    let env = [("ANVIL_MAX_YAML_ALIAS_NODES", "1000")];
    let out = run(d, &["air", "import", "small.yaml"], &env);
    refused(&out, 1, &["`small.yaml`", "cap of 1000 nodes"]);
}

/// `levels` components, each with eight properties pointing at the next: 8^(levels-1)
/// fields from a few kilobytes.
fn ref_bomb(levels: usize) -> String {
    let mut text = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      \
                    responses:\n        '200':\n          description: ok\n          content:\n            \
                    application/json:\n              schema: {$ref: '#/components/schemas/C0'}\n\
                    components:\n  schemas:\n"
        .to_string();
    for i in 0..levels {
        text.push_str(&format!(
            "    C{i}:\n      type: object\n      properties:\n"
        ));
        for j in 0..8 {
            if i + 1 < levels {
                let next = i + 1;
                text.push_str(&format!(
                    "        p{j}: {{$ref: '#/components/schemas/C{next}'}}\n"
                ));
            } else {
                text.push_str(&format!("        p{j}: {{type: string}}\n"));
            }
        }
    }
    text
}

#[test]
fn a_ref_fan_out_is_refused_at_the_import_cap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("refbomb.yaml"), ref_bomb(9)).unwrap();
    for args in [
        &["air", "import", "refbomb.yaml", "--out", "rb.json"][..],
        &["detect", "--spec", "refbomb.yaml"],
    ] {
        let out = run_capped(d, args);
        refused(
            &out,
            1,
            &["`refbomb.yaml` at `#/components/schemas/", "IMPORT_NODES"],
        );
    }
    assert!(!d.join("rb.json").exists());
    let env = [("ANVIL_MAX_IMPORT_NODES", "100")];
    std::fs::write(d.join("small.yaml"), ref_bomb(3)).unwrap();
    let out = run(d, &["air", "import", "small.yaml"], &env);
    refused(&out, 1, &["`small.yaml`", "IMPORT_NODES cap of 100 nodes"]);
}

#[test]
fn an_out_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(petstore(), d.join("spec.yaml")).unwrap();
    let original = std::fs::read(d.join("spec.yaml")).unwrap();
    std::fs::hard_link(d.join("spec.yaml"), d.join("linked.yaml")).unwrap();
    for out in ["spec.yaml", "./spec.yaml", "linked.yaml"] {
        let o = run(d, &["air", "import", "spec.yaml", "--out", out], &[]);
        refused(&o, 1, &["it is the input `spec.yaml`"]);
        assert_eq!(std::fs::read(d.join("spec.yaml")).unwrap(), original);
    }
    let o = run(d, &["air", "import", "spec.yaml", "--out", "air.json"], &[]);
    assert!(o.status.success());
    let air = std::fs::read(d.join("air.json")).unwrap();
    let export = |out: &str| {
        run(
            d,
            &[
                "air",
                "export",
                "--spec",
                "spec.yaml",
                "--air",
                "air.json",
                "--out",
                out,
            ],
            &[],
        )
    };
    refused(&export("./air.json"), 1, &["it is the input `air.json`"]);
    refused(&export("linked.yaml"), 1, &["it is the input `spec.yaml`"]);
    assert_eq!(std::fs::read(d.join("air.json")).unwrap(), air);
    assert_eq!(std::fs::read(d.join("spec.yaml")).unwrap(), original);
    assert!(export("refined.yaml").status.success());
}

#[test]
fn demo_refuses_a_dir_that_is_a_symlink_instead_of_writing_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("real")).unwrap();
    std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
    let out = run(d, &["demo", "--dir", "link"], &[]);
    refused(&out, 1, &["`link`", "symlink"]);
    assert_eq!(std::fs::read_dir(d.join("real")).unwrap().count(), 0);
}

#[test]
fn replay_model_refuses_to_listen_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    for addr in ["0.0.0.0:0", "[::]:0"] {
        // Stdin is empty: a server that did start would stop at once, not hang the test.
        let out = Command::new(BIN)
            .args(["replay-model", "--exit-on-stdin-eof", "--listen", addr])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        refused(&out, 2, &[addr, "loopback"]);
    }
}

/// One `POST /v1/messages`; the status line of the answer (empty when there is none).
fn post_messages(url: &str) -> String {
    let addr = url.trim_start_matches("http://");
    let body = r#"{"model":"x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}"#;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(
        s,
        "POST /v1/messages HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_string()
}

#[test]
fn replay_model_keeps_serving_and_exits_cleanly_when_its_stderr_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["replay-model", "--exit-on-stdin-eof"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Nobody reads stderr any more: each log line is EPIPE.
    drop(child.stderr.take());
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().trim_start_matches("listening on ").to_string();
    for _ in 0..2 {
        assert_eq!(post_messages(&url), "HTTP/1.1 200 OK");
    }
    drop(child.stdin.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));

    // A script refused at start, reported to a closed stderr: a refusal, not a panic.
    let script = dir.path().join("bad.json");
    std::fs::write(
        &script,
        r#"{"format":"anvil-replay-script","formatVersion":1,"turns":[{"content":[{"type":"text","text":"{{result.0|(}}"}]}]}"#,
    )
    .unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(BIN)
        .args(["replay-model", "--script", script.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn report_show_refuses_an_out_that_is_the_results_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/example/results.json");
    std::fs::create_dir(d.join("run")).unwrap();
    std::fs::copy(example, d.join("run/results.json")).unwrap();
    let results = std::fs::read(d.join("run/results.json")).unwrap();
    let out = run(
        d,
        &["report", "show", "run", "--out", "run/results.json"],
        &[],
    );
    refused(&out, 1, &["record of the results directory"]);
    assert_eq!(std::fs::read(d.join("run/results.json")).unwrap(), results);
    // A hard link to it, beside it: no record's name, the same file.
    std::fs::hard_link(d.join("run/results.json"), d.join("run/linked.json")).unwrap();
    let out = run(
        d,
        &["report", "show", "run", "--out", "run/linked.json"],
        &[],
    );
    refused(&out, 1, &["it is the input `run/results.json`"]);
    assert_eq!(std::fs::read(d.join("run/results.json")).unwrap(), results);
    let out = run(d, &["report", "show", "run", "--out", "run/report.md"], &[]);
    assert!(out.status.success());
}
