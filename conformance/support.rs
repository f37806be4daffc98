//! Temp worlds for trials: a repository, an AIR, a cases directory, and the CLI.
//! Each trial builds its own world; nothing is shared between trials.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub mod rails;

use anvil_bench::case::{OpenRequest, Opened, open};
use libtest_mimic::Failed;
use serde_json::{Value, json};

/// Fails the trial with a message unless `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+).into());
        }
    };
}

pub const UNIT_TARGET: &str = "op.create_payment.input.body.capture_timeout";
pub const EMAIL_TARGET: &str = "op.create_payment.input.body.customer_email";

pub struct World {
    pub dir: tempfile::TempDir,
}

pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

impl World {
    /// The bundled payments example, copied into a fresh temp directory.
    pub fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/payments");
        copy_tree(&example, dir.path());
        World { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }
    pub fn air(&self) -> PathBuf {
        self.root().join("air.json")
    }
    pub fn repo(&self) -> PathBuf {
        self.root().join("repo")
    }
    pub fn cases(&self) -> PathBuf {
        self.root().join("cases")
    }

    pub fn request(&self, skill: &str, target: &str) -> OpenRequest {
        OpenRequest::new(
            self.air(),
            self.repo(),
            skill,
            target,
            self.cases(),
            "conformance",
        )
    }

    /// Opens the unit case on the example.
    pub fn open_unit(&self) -> Result<Opened, Failed> {
        open(&self.request("annotate-unit", UNIT_TARGET)).map_err(|e| Failed::from(e.to_string()))
    }

    /// Rewrites the AIR through `edit` on its JSON value.
    pub fn edit_air(&self, edit: impl FnOnce(&mut serde_json::Value)) {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(self.air()).unwrap()).unwrap();
        edit(&mut v);
        std::fs::write(self.air(), serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    /// Makes the repository a git work tree with one commit.
    pub fn git_init(&self) {
        let repo = self.repo();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "initial"]);
    }

    pub fn cli(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
            .args(args)
            .current_dir(self.root())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

pub fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Every file under `dir` (relative path → sha256 of its bytes; directories as "dir").
pub fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(base).unwrap().to_path_buf();
            if path.is_dir() {
                out.insert(rel, "dir".into());
                walk(base, &path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.insert(rel, anvil_bench::canon::bytes_hash(&bytes));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// Writes `body` to `path` as an executable file, from a child shell rather than this
/// process: a file this process holds open for writing can be inherited by a child that
/// another trial's thread is forking at that moment, and executing the file while that child
/// lives fails with "text file busy". The shell's descriptor dies with the shell.
pub fn write_executable(path: &Path, body: &str) {
    use std::io::Write;
    let mut shell = Command::new("/bin/sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    shell
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let status = shell.wait().unwrap();
    assert!(
        status.success(),
        "writing {} failed: {status}",
        path.display()
    );
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// ---- Trust-core helpers: evidence, claims, proposals and the rails (appended) ----

/// A failed trial carrying any displayable error.
pub fn failed(e: impl std::fmt::Display) -> Failed {
    Failed::from(e.to_string())
}

/// `output/<name>` of a run.
pub fn out(run: &Path, name: &str) -> PathBuf {
    run.join("output").join(name)
}

/// The bytes of a file, or `None` when it does not exist.
pub fn bytes_of(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// Writes `value` as pretty JSON (creating parent directories).
pub fn write_json(path: &Path, value: &serde_json::Value) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// The run's lifecycle.json as JSON.
pub fn lifecycle_json(run: &Path) -> serde_json::Value {
    read_json(&run.join("lifecycle.json"))
}

/// The run's journal, one JSON value per line.
pub fn journal(run: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run.join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Succeeds with the error when `r` is a refusal of kind `kind`.
pub fn refused_as<T: std::fmt::Debug>(
    r: Result<T, anvil_bench::case::CaseError>,
    kind: &str,
) -> Result<anvil_bench::case::CaseError, Failed> {
    match r {
        Ok(v) => Err(format!("expected a `{kind}` refusal, got Ok({v:?})").into()),
        Err(e) if e.kind() == kind => Ok(e),
        Err(e) => Err(format!("expected a `{kind}` refusal, got `{}`: {e}", e.kind()).into()),
    }
}

/// Succeeds with the document error when `r` rejected a document at `field` with `kind`.
pub fn rejected_doc<T: std::fmt::Debug>(
    r: Result<T, anvil_bench::case::CaseError>,
    field: &str,
    kind: anvil_bench::case::proposal::DocErrorKind,
) -> Result<anvil_bench::case::proposal::DocError, Failed> {
    match r {
        Ok(v) => Err(format!("expected a rejection at `{field}` ({kind:?}), got Ok({v:?})").into()),
        Err(anvil_bench::case::CaseError::Document(d)) if d.field == field && d.kind == kind => {
            Ok(d)
        }
        Err(e) => Err(format!("expected a rejection at `{field}` ({kind:?}), got: {e:?}").into()),
    }
}

/// Adds a local evidence coordinate through the rail (no idempotency key).
pub fn add_ev(
    run: &Path,
    path: &str,
    lines: Option<(u32, u32)>,
) -> Result<anvil_bench::case::evidence::EvidenceArtifact, anvil_bench::case::CaseError> {
    let req = anvil_bench::case::evidence::EvidenceRequest {
        path: path.into(),
        start_line: lines.map(|l| l.0),
        end_line: lines.map(|l| l.1),
    };
    crate::support::rails::add_evidence(run, &req, None)
}

/// [`add_ev`] that must succeed; returns the artifact id.
pub fn ev(run: &Path, path: &str, start: u32, end: u32) -> Result<String, Failed> {
    add_ev(run, path, Some((start, end)))
        .map(|a| a.id)
        .map_err(|e| failed(format!("add-evidence {path}:{start}-{end}: {e}")))
}

/// `n` external artifacts with distinct uris (each 0.3, unverified); returns their ids.
pub fn externals(run: &Path, n: usize) -> Result<Vec<String>, Failed> {
    (0..n)
        .map(|i| {
            crate::support::rails::add_external_evidence(
                run,
                "vendor-docs",
                &format!("https://vendor.example/capture-{i}"),
                &format!("capture_timeout is given in seconds (page {i})\n"),
                None,
            )
            .map(|a| a.id)
            .map_err(failed)
        })
        .collect()
}

/// The claim-rail input.
pub fn claim_input(
    predicate: &str,
    value: serde_json::Value,
    ids: &[&str],
) -> anvil_bench::case::research::ClaimInput {
    anvil_bench::case::research::ClaimInput {
        predicate: predicate.into(),
        value,
        artifact_ids: ids.iter().map(std::string::ToString::to_string).collect(),
        confidence: 0.9,
    }
}

/// Adds a claim through the rail that must succeed; returns the claim id.
pub fn claim(
    run: &Path,
    predicate: &str,
    value: serde_json::Value,
    ids: &[&str],
) -> Result<String, Failed> {
    crate::support::rails::add_claim(run, claim_input(predicate, value, ids), None)
        .map(|c| c.id)
        .map_err(|e| failed(format!("add-claim {predicate}: {e}")))
}

/// Freezes research; must succeed.
pub fn freeze(run: &Path) -> Result<anvil_bench::case::research::ResearchRecord, Failed> {
    crate::support::rails::freeze_research(run, None).map_err(failed)
}

/// A unit-case run with strong local grounding for `field.unit = "s"`.
pub struct UnitRun {
    pub run: PathBuf,
    /// service.py lines 32-39 (the `timedelta(seconds=...)` conversion): implementation.
    pub implementation: String,
    /// `test_capture.py` lines 6-8: `contract_test`.
    pub test: String,
    /// `field.unit = "s"` citing both.
    pub claim: String,
}

/// Opens the unit case and deposits the strong grounding, research still open.
pub fn unit_research(w: &World) -> Result<UnitRun, Failed> {
    let run = w.open_unit()?.run_dir;
    unit_research_in(run)
}

/// Deposits the strong unit grounding into an already open run.
pub fn unit_research_in(run: PathBuf) -> Result<UnitRun, Failed> {
    let implementation = ev(&run, "src/payments/service.py", 32, 39)?;
    let test = ev(&run, "tests/test_capture.py", 6, 8)?;
    let claim = claim(
        &run,
        "field.unit",
        serde_json::json!("s"),
        &[&implementation, &test],
    )?;
    Ok(UnitRun {
        run,
        implementation,
        test,
        claim,
    })
}

/// [`unit_research`] with research frozen.
pub fn frozen_unit(w: &World) -> Result<UnitRun, Failed> {
    let u = unit_research(w)?;
    freeze(&u.run)?;
    Ok(u)
}

/// A proposal of the unit case setting `unit` to `value`, grounded by `claims`.
pub fn unit_proposal(value: &str, claims: &[&str]) -> serde_json::Value {
    serde_json::json!({
        "format": "anvil-proposal",
        "formatVersion": 1,
        "skill": "annotate-unit",
        "skillVersion": 1,
        "deficiency": "unit_ambiguous_field",
        "target": UNIT_TARGET,
        "patch": {"target": UNIT_TARGET, "set": {"unit": value}},
        "grounding": {"unit": claims},
        "confidence": 0.9,
        "rationale": "capture_window converts the wire value with timedelta(seconds=...)"
    })
}

/// Writes `proto/payments.proto`, a schema-scope file stating `capture_timeout` in seconds,
/// and returns its path and line count: one excerpt of it grounds the unit at strength 0.8,
/// annotate-unit's bar exactly.
pub fn seconds_schema(w: &World) -> (&'static str, u32) {
    let proto = w.repo().join("proto/payments.proto");
    std::fs::create_dir_all(proto.parent().unwrap()).unwrap();
    std::fs::write(
        &proto,
        "message CreatePayment {\n  // capture_timeout is whole seconds.\n  int64 capture_timeout = 3;\n}\n",
    )
    .unwrap();
    ("proto/payments.proto", 4)
}

/// Writes `output/proposal.json` of a run by hand (no rail).
pub fn write_proposal(run: &Path, proposal: &serde_json::Value) {
    write_json(&out(run, "proposal.json"), proposal);
}

/// Makes `capture_timeout` carry an inferred unit `s` (so it has a current value) and opens
/// annotate-unit on it for `unproven_inferred_value`.
pub fn open_inferred_unit(w: &World) -> Result<PathBuf, Failed> {
    w.edit_air(|air| {
        let field = &mut air["operations"][0]["fields"][2];
        assert_eq!(field["name"], "capture_timeout");
        field["unit"] = serde_json::json!("s");
        field["inferred"] = serde_json::json!(["unit"]);
    });
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.deficiency = Some("unproven_inferred_value".into());
    open(&req).map(|o| o.run_dir).map_err(failed)
}

/// The id the engine derives for a local coordinate (to forge hand-written evidence).
pub fn local_artifact_id(
    kind: &str,
    revision: &str,
    path: &str,
    start: u32,
    end: u32,
    content_hash: &str,
) -> String {
    let coordinate = serde_json::json!({
        "kind": kind, "revision": revision, "path": path,
        "startLine": start, "endLine": end, "contentHash": content_hash,
    });
    let hex =
        anvil_bench::canon::sha256_hex(anvil_bench::canon::canonical_json(&coordinate).as_bytes());
    format!("ev-{}", &hex[..24])
}

/// The id the engine derives for an external coordinate.
pub fn external_artifact_id(source: &str, uri: &str, content_hash: &str) -> String {
    let coordinate = serde_json::json!({
        "kind": "external", "source": source, "uri": uri, "contentHash": content_hash,
    });
    let hex =
        anvil_bench::canon::sha256_hex(anvil_bench::canon::canonical_json(&coordinate).as_bytes());
    format!("ev-{}", &hex[..24])
}

/// Runs `anvil-bench case <rail> <run> <args…>`.
pub fn rail_cli(w: &World, rail: &str, run: &Path, args: &[&str]) -> Output {
    let mut all = vec!["case", rail, run.to_str().unwrap()];
    all.extend_from_slice(args);
    w.cli(&all)
}

/// On a frozen unit run, a hand-written proposal (the valid one, changed by `mutate`) must
/// be rejected by the validate rail at `field` with `kind`, naming `output/proposal.json`,
/// with lifecycle.json and proposal.json left byte-identical (nothing frozen, nothing
/// coerced). The unchanged proposal passes first, so the rejection is the mutation's.
pub fn proposal_refused(
    mutate: impl FnOnce(&mut serde_json::Value),
    field: &str,
    kind: anvil_bench::case::proposal::DocErrorKind,
) -> Result<anvil_bench::case::proposal::DocError, Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let mut p = unit_proposal("s", &[&u.claim]);
    write_proposal(&u.run, &p);
    let control = crate::support::rails::validate(&u.run, None, true).map_err(failed)?;
    if control.verdict != anvil_bench::case::validate::Verdict::Pass {
        return Err(format!("the unchanged proposal does not pass: {control:?}").into());
    }
    mutate(&mut p);
    write_proposal(&u.run, &p);
    proposal_bytes_refused(&u.run, field, kind)
}

/// [`proposal_refused`] for several variants on one frozen unit run: the unchanged
/// proposal passes first, then each `values[i]` applied by `set` must be rejected at
/// `field` with `kind` (each rejection leaves the run as it was, so the next variant
/// meets the same run). Returns the rejections in order.
pub fn proposals_refused(
    values: &[&str],
    set: impl Fn(&mut serde_json::Value, &str),
    field: &str,
    kind: anvil_bench::case::proposal::DocErrorKind,
) -> Result<Vec<anvil_bench::case::proposal::DocError>, Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let good = unit_proposal("s", &[&u.claim]);
    write_proposal(&u.run, &good);
    let control = crate::support::rails::validate(&u.run, None, true).map_err(failed)?;
    if control.verdict != anvil_bench::case::validate::Verdict::Pass {
        return Err(format!("the unchanged proposal does not pass: {control:?}").into());
    }
    let mut out = Vec::new();
    for value in values {
        let mut p = good.clone();
        set(&mut p, value);
        write_proposal(&u.run, &p);
        out.push(
            proposal_bytes_refused(&u.run, field, kind)
                .map_err(|e| failed(format!("{field} {value:?}: {}", msg(&e))))?,
        );
    }
    Ok(out)
}

/// The validate rail (dry run and real) rejects the run's current proposal.json at
/// `field` with `kind`; nothing is recorded and the proposal is not rewritten.
pub fn proposal_bytes_refused(
    run: &Path,
    field: &str,
    kind: anvil_bench::case::proposal::DocErrorKind,
) -> Result<anvil_bench::case::proposal::DocError, Failed> {
    let written = bytes_of(&out(run, "proposal.json"));
    let lc = bytes_of(&run.join("lifecycle.json"));
    let dry = rejected_doc(
        crate::support::rails::validate(run, None, true),
        field,
        kind,
    )
    .map_err(|e| failed(format!("validate --dry-run: {}", msg(&e))))?;
    let d = rejected_doc(
        crate::support::rails::validate(run, None, false),
        field,
        kind,
    )
    .map_err(|e| failed(format!("validate: {}", msg(&e))))?;
    if dry != d {
        return Err(format!("dry run and rail disagree: {dry:?} vs {d:?}").into());
    }
    if d.document != "output/proposal.json" || d.reason.trim().is_empty() {
        return Err(format!("the rejection does not name document and reason: {d:?}").into());
    }
    let shown = d.to_string();
    if !shown.contains("output/proposal.json") || !shown.contains(field) {
        return Err(format!("the message does not name document and field: {shown}").into());
    }
    if bytes_of(&run.join("lifecycle.json")) != lc {
        return Err("a rejected proposal changed lifecycle.json".into());
    }
    if bytes_of(&out(run, "proposal.json")) != written {
        return Err("a rejected proposal was rewritten (coerced)".into());
    }
    if out(run, "critique.json").exists() {
        return Err("a rejected proposal got a critique".into());
    }
    Ok(d)
}

/// The message of a failed trial (for adding context).
pub fn msg(f: &Failed) -> &str {
    f.message().unwrap_or("failed")
}

/// Re-seals a run after its engine-owned files were edited, as a forger who knows the
/// format would: the journal line that last wrote lifecycle.json is made to name its new
/// hash, every later line's `prev` is recomputed, and the lock's anchor follows. Trials
/// use it to prove that the checks behind the seal (re-running validation, re-binding
/// the target) hold on their own.
pub fn reseal(run: &Path) {
    let hash = |b: &[u8]| anvil_bench::canon::bytes_hash(b);
    let case_hash = hash(&std::fs::read(run.join("case.json")).unwrap());
    let lc_hash = hash(&std::fs::read(run.join("lifecycle.json")).unwrap());
    let text = std::fs::read_to_string(run.join("journal.jsonl")).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let writer = lines
        .iter()
        .rposition(|l| l["writes"].get("lifecycle.json").is_some());
    let mut prev = case_hash;
    let mut out = String::new();
    for (i, line) in lines.iter_mut().enumerate() {
        line["prev"] = json!(prev);
        if Some(i) == writer {
            line["writes"]["lifecycle.json"] = json!(lc_hash);
        }
        let rendered = serde_json::to_string(line).unwrap();
        prev = hash(rendered.as_bytes());
        out.push_str(&rendered);
        out.push('\n');
    }
    std::fs::write(run.join("journal.jsonl"), out).unwrap();
    let lock = std::fs::read_to_string(run.join(".lock")).unwrap_or_default();
    let fence = lock.lines().next().unwrap_or("0").to_string();
    std::fs::write(
        run.join(".lock"),
        format!("{fence}\n{}\n{prev}\n", lines.len()),
    )
    .unwrap();
}
