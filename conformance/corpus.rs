//! `scenarios check` fails, naming the file, on every kind of corpus defect (X-CORPUS-*),
//! passes a sound corpus, and `scenarios seal` commits to the label set (X-SEAL-1).
//!
//! Each trial builds a small corpus in a temp dir from one tiny valid scenario (a Python
//! payments service whose AIR has a deficiency for each of the five skills), breaks one
//! thing, and runs the real binary.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{read_json, stdout, write_json};
use crate::{Check, ensure};

mod coverage;
mod defects;

const CLASSES: [&str; 9] = [
    "documented",
    "implicit-in-impl",
    "only-in-tests",
    "conflicting",
    "generic-name",
    "sensitive",
    "unit-bearing",
    "weak-single-source",
    "tautological",
];
const LANGUAGES: [&str; 5] = ["python", "go", "rust", "java", "typescript"];
const SKILLS: [&str; 5] = [
    "annotate-unit",
    "enrich-error",
    "classify-sensitivity",
    "describe-field",
    "describe-operation",
];
/// The evidence every generated label cites: the constant on line 3 of the service.
const SERVICE: &str = "src/payments/service.py";

/// One scenario to generate.
#[derive(Clone)]
struct Spec {
    class: &'static str,
    name: String,
    language: &'static str,
    skill: &'static str,
    decline: bool,
}

impl Spec {
    fn id(&self) -> String {
        format!("{}/{}", self.class, self.name)
    }
}

fn base() -> Spec {
    Spec {
        class: "documented",
        name: "base".into(),
        language: "python",
        skill: "annotate-unit",
        decline: false,
    }
}

/// A corpus in a temp dir: `scenarios/` and `labels-private/`.
struct Corpus {
    dir: tempfile::TempDir,
}

impl Corpus {
    fn new() -> Corpus {
        let c = Corpus {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(c.scenarios()).unwrap();
        std::fs::create_dir_all(c.labels()).unwrap();
        c
    }

    /// The one valid scenario `documented/base`.
    fn one() -> Corpus {
        let c = Corpus::new();
        c.add(&base());
        c
    }

    /// 45 scenarios meeting every coverage rule; `tweak` may change or drop specs first.
    fn full(tweak: impl Fn(Spec) -> Option<Spec>) -> Corpus {
        let c = Corpus::new();
        for (ci, class) in CLASSES.into_iter().enumerate() {
            for k in 0..5 {
                let n = ci * 5 + k;
                let spec = Spec {
                    class,
                    name: format!("s{k}"),
                    language: LANGUAGES[n % LANGUAGES.len()],
                    skill: SKILLS[(ci + k) % SKILLS.len()],
                    decline: n % 3 == 0,
                };
                if let Some(spec) = tweak(spec) {
                    c.add(&spec);
                }
            }
        }
        c
    }

    fn scenarios(&self) -> PathBuf {
        self.dir.path().join("scenarios")
    }
    fn labels(&self) -> PathBuf {
        self.dir.path().join("labels-private")
    }
    fn scenario(&self, id: &str) -> PathBuf {
        self.scenarios().join(id)
    }
    fn label(&self, id: &str) -> PathBuf {
        self.labels().join(format!("{id}.json"))
    }

    fn add(&self, spec: &Spec) {
        let dir = self.scenario(&spec.id());
        let (target, values) = match spec.skill {
            "annotate-unit" => (
                "op.create_payment.input.body.capture_timeout",
                json!({"unit": {"equals": "ms"}}),
            ),
            "enrich-error" => (
                "op.create_payment.error.GATEWAY_BUSY",
                json!({"retryable": {"equals": true}}),
            ),
            "classify-sensitivity" => (
                "op.create_payment.input.body.customer_email",
                json!({"sensitivity": {"equals": "pii"}}),
            ),
            "describe-field" => (
                "op.create_payment.input.body.reference",
                json!({"description": {"mustMention": [["ledger", "bookkeeping"]],
                                       "mustNotMention": ["password"]}}),
            ),
            _ => (
                "op.create_payment",
                json!({"description": {"mustMention": [["authorises", "authorizes"]]}}),
            ),
        };
        write_json(
            &dir.join("scenario.json"),
            &json!({"format": "anvil-scenario", "formatVersion": 1, "id": spec.id(),
                    "class": spec.class, "skill": spec.skill, "target": target,
                    "language": spec.language}),
        );
        write_json(&dir.join("air.json"), &air());
        write_repo(&dir.join("repo"));
        let canary: String = spec
            .id()
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        let mut expect = json!({"status": "proposal_generated", "values": values,
                                "evidence": [{"path": SERVICE, "lines": [3, 4]}]});
        if spec.decline {
            expect = json!({"status": "insufficient_evidence"});
        }
        write_json(
            &self.label(&spec.id()),
            &json!({"format": "anvil-label", "formatVersion": 1, "scenario": spec.id(),
                    "canary": format!("ANVIL-CANARY-{canary}0123456789abcdef"),
                    "expect": expect}),
        );
    }

    fn edit(&self, path: &Path, edit: impl FnOnce(&mut Value)) {
        let mut v = read_json(path);
        edit(&mut v);
        write_json(path, &v);
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
            .args(args)
            .arg("--labels")
            .arg(self.labels())
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `scenarios check [--no-coverage] --no-oracle`, once as text and once as JSON. (The
    /// oracle's own trials use [`Corpus::check_with_oracle`].)
    fn check(&self, coverage: bool) -> Result<(Output, Value), Failed> {
        self.check_args(coverage, false)
    }

    /// `scenarios check --no-coverage` with the oracle run on every scenario.
    fn check_with_oracle(&self) -> Result<(Output, Value), Failed> {
        self.check_args(false, true)
    }

    fn check_args(&self, coverage: bool, oracle: bool) -> Result<(Output, Value), Failed> {
        let mut args = vec!["scenarios", "check", "--scenarios"];
        let scenarios = self.scenarios();
        args.push(scenarios.to_str().unwrap());
        if !coverage {
            args.push("--no-coverage");
        }
        if !oracle {
            args.push("--no-oracle");
        }
        let text = self.run(&args);
        args.push("--json");
        let doc = self.run(&args);
        ensure!(
            text.status.code() == doc.status.code(),
            "text and JSON exit codes differ"
        );
        let value: Value = serde_json::from_slice(&doc.stdout)
            .map_err(|e| format!("check --json printed no JSON: {e}\n{}", stdout(&doc)))?;
        Ok((text, value))
    }

    fn seal(&self) -> Result<String, Failed> {
        let out = self.run(&["scenarios", "seal"]);
        ensure!(out.status.success(), "seal failed: {out:?}");
        Ok(stdout(&out).trim().to_string())
    }
}

fn air() -> Value {
    json!({
        "airVersion": 1,
        "service": {"id": "payments", "version": "1.4.0"},
        "operations": [{
            "id": "create_payment", "method": "POST", "path": "/payments",
            "fields": [
                {"location": "input.body", "name": "amount", "type": "integer", "required": true,
                 "description": "Charge total before fees.", "unit": "minor_unit"},
                {"location": "input.body", "name": "capture_timeout", "type": "integer",
                 "description": "How long the gateway waits for capture before voiding."},
                {"location": "input.body", "name": "customer_email", "type": "string",
                 "description": "Where receipts are sent."},
                {"location": "input.body", "name": "reference", "type": "string"}
            ],
            "errors": [
                {"code": "CARD_DECLINED", "status": 402, "retryable": false},
                {"code": "GATEWAY_BUSY", "status": 503}
            ]
        }]
    })
}

/// Four files, 134 lines: service (40), gateway (34), tests (30), docs (30).
fn write_repo(repo: &Path) {
    let mut service =
        String::from("\"\"\"Payments service.\"\"\"\n\nCAPTURE_TIMEOUT_MS = 30_000\n# ms\n");
    for i in 0..36 {
        let _ = writeln!(service, "def step_{i}(p):  # stage {i}");
    }
    let mut gateway = String::from("import time\n\n");
    for i in 0..32 {
        let _ = writeln!(gateway, "RETRY_{i} = {i}");
    }
    let mut tests = String::from("from payments import service\n\n");
    for i in 0..28 {
        let _ = writeln!(tests, "def test_step_{i}(): assert service.step_{i}");
    }
    let mut docs = String::from("# Payments\n\n");
    for i in 0..28 {
        let _ = writeln!(docs, "* step {i} runs after step {}", i + 1);
    }
    for (path, text) in [
        (SERVICE, service),
        ("src/payments/gateway.py", gateway),
        ("tests/test_service.py", tests),
        ("docs/payments.md", docs),
    ] {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Check exits 1, its JSON lists a `kind` problem naming exactly `file`, the text output
/// names the file too; returns the messages of every such problem, one a line.
fn fails_naming(c: &Corpus, coverage: bool, kind: &str, file: &Path) -> Result<String, Failed> {
    let (text, doc) = c.check(coverage)?;
    ensure!(
        text.status.code() == Some(1),
        "expected exit 1, got {:?}\n{}",
        text.status.code(),
        stdout(&text)
    );
    ensure!(doc["ok"] == false, "JSON says ok: {doc}");
    let want = file.to_str().unwrap();
    let messages: Vec<&str> = doc["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["kind"] == kind && p["file"] == want)
        .filter_map(|p| p["message"].as_str())
        .collect();
    ensure!(
        !messages.is_empty(),
        "no `{kind}` problem naming {want}; got {doc:#}"
    );
    ensure!(
        stdout(&text).contains(want),
        "text output does not name {want}:\n{}",
        stdout(&text)
    );
    Ok(messages.join("\n"))
}

fn passes(c: &Corpus, coverage: bool) -> Result<(), Failed> {
    let (text, doc) = c.check(coverage)?;
    ensure!(
        text.status.success() && doc["ok"] == true,
        "expected a clean check, got {:?}\n{}",
        text.status.code(),
        stdout(&text)
    );
    Ok(())
}

const BASE: &str = "documented/base";

fn scenario_json(c: &Corpus) -> PathBuf {
    c.scenario(BASE).join("scenario.json")
}

fn trial(
    name: &'static str,
    rules: &'static [&'static str],
    run: fn() -> Result<(), Failed>,
) -> Check {
    Check { name, rules, run }
}

pub fn checks() -> Vec<Check> {
    let mut all = defects::checks();
    all.extend(coverage::checks());
    all
}
