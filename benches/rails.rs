//! The engine's rails and tools at the scales issue 13 names: one whole scripted case
//! (open → close) through the library API, durable and relaxed; each rail of that case on
//! its own (`rail/…`, durable); add-evidence of 1 KiB, 1 MiB and 16 MiB files;
//! `source.find_text` over 100 and 2,000 files; `close` whose whole-repository scan reads
//! 100 and 1,000 files that state a value on every line.
//!
//! `cargo bench --bench rails` (add `-- --quick` for a short run, `-- rail/` for the rails
//! alone). The side-by-side table against `--version`, `sha256sum` and `rg -F` is
//! `benches/side_by_side.sh`.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use anvil_bench::battery::workspace::copy_tree;
use anvil_bench::case::evidence::EvidenceRequest;
use anvil_bench::case::research::ClaimInput;
use anvil_bench::case::{OpenMode, OpenRequest, RunHandle, open};
use anvil_bench::reconcile::CloseRequest;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

const TARGET: &str = "op.create_payment.input.body.capture_timeout";

/// The bundled payments example in a fresh directory.
fn world() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // The project's copier makes its destination itself.
    std::fs::remove_dir(dir.path()).unwrap();
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/payments"),
        dir.path(),
    )
    .unwrap();
    dir
}

fn request(root: &Path) -> OpenRequest {
    OpenRequest {
        air: root.join("air.json"),
        repo: root.join("repo"),
        skill: "annotate-unit".into(),
        target: TARGET.into(),
        deficiency: None,
        cases_dir: root.join("cases"),
        executor: "bench".into(),
        scopes: vec![],
        mode: OpenMode::New,
        tool_limits: vec![],
        snapshots: vec![],
    }
}

fn evidence(run: &RunHandle, path: &str, lines: Option<(u32, u32)>) -> String {
    let req = EvidenceRequest {
        path: path.into(),
        start_line: lines.map(|l| l.0),
        end_line: lines.map(|l| l.1),
    };
    run.add_evidence(&req, None).unwrap().id
}

/// A scripted case in progress: the run and the ids its later steps cite.
struct Case {
    root: PathBuf,
    run: Option<RunHandle>,
    evidence: Vec<String>,
    claim: Option<String>,
}

impl Case {
    fn new(root: &Path) -> Case {
        Case {
            root: root.to_path_buf(),
            run: None,
            evidence: vec![],
            claim: None,
        }
    }

    fn run(&self) -> &RunHandle {
        self.run.as_ref().expect("the case is open")
    }

    /// Loads the run again from its directory, as a CLI rail does on every call.
    fn reload(&mut self) {
        let dir = self.run().dir().to_path_buf();
        self.run = Some(RunHandle::open(&dir).unwrap());
    }
}

fn step_open(c: &mut Case) {
    let dir = open(&request(&c.root)).unwrap().run_dir;
    c.run = Some(RunHandle::open(&dir).unwrap());
}

fn step_cite_service(c: &mut Case) {
    let id = evidence(c.run(), "src/payments/service.py", Some((32, 39)));
    c.evidence.push(id);
}

fn step_cite_test(c: &mut Case) {
    let id = evidence(c.run(), "tests/test_capture.py", Some((6, 8)));
    c.evidence.push(id);
}

fn step_claim(c: &mut Case) {
    let claim = c
        .run()
        .add_claim(
            ClaimInput {
                predicate: "field.unit".into(),
                value: json!("s"),
                artifact_ids: c.evidence.clone(),
                confidence: 0.9,
            },
            None,
        )
        .unwrap()
        .id;
    c.claim = Some(claim);
}

fn step_freeze(c: &mut Case) {
    c.run().freeze_research(None).unwrap();
}

/// The agent's own work, not a rail: the proposal file validate reads.
fn step_propose(c: &mut Case) {
    let claim = c.claim.clone().expect("a claim was made");
    let proposal = json!({
        "format": "anvil-proposal", "formatVersion": 1, "skill": "annotate-unit",
        "skillVersion": 1, "deficiency": "unit_ambiguous_field", "target": TARGET,
        "patch": {"target": TARGET, "set": {"unit": "s"}}, "grounding": {"unit": [claim]},
        "confidence": 0.9, "rationale": "timedelta(seconds=...) converts the wire value"
    });
    std::fs::write(
        c.run().output("proposal.json"),
        serde_json::to_vec_pretty(&proposal).unwrap(),
    )
    .unwrap();
}

fn step_validate(c: &mut Case) {
    c.run().validate(None, false).unwrap();
}

fn step_finalize(c: &mut Case) {
    c.run().finalize(None, None, None).unwrap();
}

fn step_close(c: &mut Case) {
    black_box(c.run().close(&CloseRequest::default(), None).unwrap());
}

/// One step of the scripted case.
type Step = fn(&mut Case);

/// The whole scripted case, in order: each step, and the rail it is when it is one (the
/// second excerpt and the proposal file are done before a later rail, never timed alone).
const STEPS: [(Option<&str>, Step); 9] = [
    (Some("open"), step_open),
    (Some("add_evidence"), step_cite_service),
    (None, step_cite_test),
    (Some("add_claim"), step_claim),
    (Some("freeze_research"), step_freeze),
    (None, step_propose),
    (Some("validate"), step_validate),
    (Some("finalize"), step_finalize),
    (Some("close"), step_close),
];

/// One whole case: open, two excerpts, a claim, freeze, a proposal, validate, finalize,
/// close.
fn whole_case(root: &Path) {
    let mut case = Case::new(root);
    for (_, step) in STEPS {
        step(&mut case);
    }
}

fn bench_case(c: &mut Criterion) {
    let mut g = c.benchmark_group("case");
    g.sample_size(20);
    g.bench_function("open_to_close_durable", |b| {
        // The world is returned, so removing it is not timed.
        b.iter_batched(
            world,
            |w| {
                whole_case(w.path());
                w
            },
            BatchSize::PerIteration,
        );
    });
    g.bench_function("open_to_close_relaxed", |b| {
        b.iter_batched(
            world,
            |w| {
                anvil_bench::fsio::relaxed(|| whole_case(w.path()));
                w
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

/// Each rail of the whole case on its own, durable (what a CLI rail pays): the steps before
/// it run in the untimed setup, and the timed routine loads the run from its directory (as
/// every CLI call does) and calls the one rail. `open` is the case open and that first load.
fn bench_rail(c: &mut Criterion) {
    let mut g = c.benchmark_group("rail");
    g.sample_size(20);
    for (i, (name, step)) in STEPS.iter().enumerate() {
        let Some(name) = name else { continue };
        g.bench_function(*name, |b| {
            b.iter_batched(
                || {
                    let w = world();
                    let mut case = Case::new(w.path());
                    for (_, before) in &STEPS[..i] {
                        before(&mut case);
                    }
                    (w, case)
                },
                |(w, mut case)| {
                    if case.run.is_some() {
                        case.reload();
                    }
                    step(&mut case);
                    // Returned, so removing the world is not timed.
                    (w, case)
                },
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

/// A world whose repository holds `docs/big.md` of about `bytes` bytes of text.
fn world_with_file(bytes: usize) -> (tempfile::TempDir, PathBuf) {
    let w = world();
    let line = "The capture window is measured in seconds of wall-clock time.\n";
    let text = line.repeat(bytes / line.len() + 1);
    std::fs::write(w.path().join("repo/docs/big.md"), text).unwrap();
    let run = open(&request(w.path())).unwrap().run_dir;
    (w, run)
}

fn bench_add_evidence(c: &mut Criterion) {
    let mut g = c.benchmark_group("add_evidence");
    g.sample_size(10);
    for (name, size) in [("1KiB", 1 << 10), ("1MiB", 1 << 20), ("16MiB", 16 << 20)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || world_with_file(size),
                |(_w, run)| {
                    black_box(evidence(
                        &RunHandle::open(&run).unwrap(),
                        "docs/big.md",
                        None,
                    ))
                },
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

/// Adds `files` files of about `per_file` bytes each under the world's `src/gen/`, every
/// line of them naming the target in a conversion the unit rules read.
fn add_tree(root: &Path, files: usize, per_file: usize) {
    let src = root.join("repo/src/gen");
    std::fs::create_dir_all(&src).unwrap();
    let line = "def handler(request): return request.capture_timeout * 1000  # window\n";
    let body = line.repeat(per_file / line.len() + 1);
    for i in 0..files {
        std::fs::write(src.join(format!("m{i:05}.py")), &body).unwrap();
    }
}

/// A world whose `src/` holds `files` files of about `per_file` bytes each.
fn world_with_tree(files: usize, per_file: usize) -> (tempfile::TempDir, PathBuf) {
    let w = world();
    add_tree(w.path(), files, per_file);
    let mut req = request(w.path());
    req.tool_limits = vec![
        "selectedFiles=100000".into(),
        "selectedBytes=1000000000".into(),
    ];
    let run = open(&req).unwrap().run_dir;
    (w, run)
}

fn find_text(run: &Path, files: usize) -> serde_json::Value {
    let run_id = run.file_name().unwrap().to_string_lossy().into_owned();
    let request = json!({"format": "anvil-investigation-request", "formatVersion": 1,
        "runId": run_id, "requests": [{"requestId": "a", "operation": "source.find_text",
        "arguments": {"text": "capture_timeout", "caseSensitive": true, "offset": 0,
        "limit": 10}}]});
    let _ = files;
    let handle = anvil_bench::case::RunHandle::open(run).unwrap();
    serde_json::to_value(anvil_bench::tools::query(&handle, &request).unwrap()).unwrap()
}

fn bench_find_text(c: &mut Criterion) {
    let mut g = c.benchmark_group("find_text");
    g.sample_size(10);
    // 2,000 files of 50 KB: the 100 MB of the measurement.
    for files in [100usize, 2000] {
        let (_w, run) = world_with_tree(files, 50_000);
        g.bench_function(format!("{files}_files"), |b| {
            b.iter(|| black_box(find_text(&run, files)));
        });
    }
    g.finish();
}

/// `close` at the end of the whole case, on a repository with `files` more files of 50 KB
/// whose every line states the unit: close's whole-repository scan (R-GATE-2) reads them
/// up to its budget (5,000 files, 64 MiB) and looks for two lines stating different
/// values among every line that states one (about 600 per file here, none conflicting).
fn bench_close_scan(c: &mut Criterion) {
    let mut g = c.benchmark_group("close_scan");
    g.sample_size(10);
    for files in [100usize, 1000] {
        g.bench_function(format!("{files}_files"), |b| {
            b.iter_batched(
                || {
                    let w = world();
                    add_tree(w.path(), files, 50_000);
                    let mut case = Case::new(w.path());
                    for (_, before) in &STEPS[..STEPS.len() - 1] {
                        before(&mut case);
                    }
                    (w, case)
                },
                |(w, mut case)| {
                    step_close(&mut case);
                    (w, case)
                },
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_case,
    bench_rail,
    bench_add_evidence,
    bench_find_text,
    bench_close_scan
);
criterion_main!(benches);
