//! Property: random request documents never panic the tool router; each is either answered
//! whole (one result per request, and valid against the request schema) or refused with one
//! of the typed codes — and the repository is never changed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anvil_bench::case::{OpenMode, OpenRequest, open};
use anvil_bench::tools;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// One run on a private copy of the payments example, shared by every case (queries are
/// read-only, so sharing it is itself part of what is tested).
struct Fixture {
    _dir: tempfile::TempDir,
    run: anvil_bench::case::RunHandle,
    run_id: String,
    repo: PathBuf,
}

fn copy_tree(from: &Path, to: &Path) {
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

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/payments"),
            dir.path(),
        );
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("fixtures")).unwrap();
        std::fs::write(
            repo.join("fixtures/payments.snapshot.json"),
            r#"{"format": "anvil-database-snapshot", "formatVersion": 1, "table": "payments",
                "columns": [{"name": "id", "type": "json"}, {"name": "status", "type": "string"}],
                "rows": [{"id": 1, "status": "captured"}, {"id": "1", "status": "failed"}],
                "coverage": "partial"}"#,
        )
        .unwrap();
        let opened = open(&OpenRequest {
            air: dir.path().join("air.json"),
            repo: repo.clone(),
            skill: "annotate-unit".into(),
            target: "op.create_payment.input.body.capture_timeout".into(),
            deficiency: None,
            cases_dir: dir.path().join("cases"),
            executor: "proptest".into(),
            scopes: vec![],
            mode: OpenMode::New,
            tool_limits: vec![],
            snapshots: vec![],
        })
        .unwrap();
        Fixture {
            run: anvil_bench::case::RunHandle::open(&opened.run_dir).unwrap(),
            run_id: opened.run_id.to_string(),
            repo,
            _dir: dir,
        }
    })
}

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "\\PC{0,12}".prop_map(Value::from),
        Just(json!("src/payments/service.py")),
        Just(json!("../air.json")),
        Just(json!("/etc/passwd")),
        Just(json!("capture_timeout")),
        Just(json!("1 OR 1=1")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Argument and envelope names, mostly real ones.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "glob", "offset", "limit", "paths", "text", "caseSensitive", "symbol", "path",
            "startLine", "endLine", "table", "filters", "projection", "searchColumns", "value",
        ])
        .prop_map(str::to_string),
        1 => "[a-zA-Z_]{1,8}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(1)),
        Just(json!("1")),
        Just(json!(1.0)),
        Just(json!(true)),
        Just(json!(null)),
        Just(json!("captured")),
        Just(json!("'; DROP TABLE payments; --")),
    ]
}

/// Arguments that are valid for `op` (when it is a known operation).
fn valid_args(op: &str) -> BoxedStrategy<Value> {
    let path = prop::sample::select(vec![
        "src/payments/service.py",
        "docs/payments.md",
        "tests/test_capture.py",
        "fixtures/payments.snapshot.json",
    ]);
    match op {
        "source.list_files" => (prop::option::of(Just("src/**")), 0u64..10, 1u64..=100)
            .prop_map(|(glob, offset, limit)| match glob {
                Some(g) => json!({"glob": g, "offset": offset, "limit": limit}),
                None => json!({"offset": offset, "limit": limit}),
            })
            .boxed(),
        "source.find_text" => (
            prop::sample::select(vec!["capture", "timeout", "def ", "X", "é"]),
            any::<bool>(),
            prop::option::of(prop::collection::btree_set(path, 1..3)),
            1u64..=100,
        )
            .prop_map(|(text, cs, paths, limit)| {
                let mut a = json!({"text": text, "caseSensitive": cs, "limit": limit});
                if let Some(p) = paths {
                    a["paths"] = json!(p);
                }
                a
            })
            .boxed(),
        "source.find_symbol" => {
            prop::sample::select(vec!["capture_timeout", "request", "timedelta"])
                .prop_map(|s| json!({"symbol": s}))
                .boxed()
        }
        "source.read_context" => (path, 1u64..60, 0u64..12)
            .prop_map(|(p, start, n)| json!({"path": p, "startLine": start, "endLine": start + n}))
            .boxed(),
        "database.describe" => {
            prop_oneof![Just(json!({})), Just(json!({"table": "payments"}))].boxed()
        }
        "database.lookup" => (prop::sample::select(vec!["id", "status"]), scalar())
            .prop_map(|(c, v)| json!({"table": "payments", "filters": {c: v}}))
            .boxed(),
        "database.find_references" => scalar()
            .prop_map(
                |v| json!({"table": "payments", "searchColumns": ["id", "status"], "value": v}),
            )
            .boxed(),
        _ => Just(json!({})).boxed(),
    }
}

/// A request: mostly a known operation with valid arguments, sometimes mutated.
fn request() -> impl Strategy<Value = Value> {
    let op = prop_oneof![
        8 => prop::sample::select(tools::OPERATIONS.to_vec()).prop_map(str::to_string),
        1 => "[a-z_.]{0,20}",
    ];
    op.prop_flat_map(|op| {
        let args = prop_oneof![
            6 => valid_args(&op),
            1 => prop::collection::vec((key(), any_json()), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            1 => any_json(),
        ];
        (
            Just(op),
            args,
            prop::option::weighted(0.1, (key(), any_json())),
            prop::option::weighted(0.05, any_json()),
        )
    })
    .prop_map(|(op, mut args, extra, wrong_op)| {
        if let (Some((k, v)), Some(obj)) = (extra, args.as_object_mut()) {
            obj.insert(k, v);
        }
        let op = wrong_op.unwrap_or(Value::String(op));
        json!({"requestId": "", "operation": op, "arguments": args})
    })
}

/// Requests with ids `Q0, Q1, …`, occasionally repeated or replaced by any value.
fn requests() -> impl Strategy<Value = Vec<Value>> {
    let id = prop::option::weighted(0.05, prop_oneof![Just(json!("Q0")), any_json()]);
    prop_oneof![3 => 1usize..4, 1 => 0usize..18]
        .prop_flat_map(move |n| prop::collection::vec((request(), id.clone()), n))
        .prop_map(|rs| {
            rs.into_iter()
                .enumerate()
                .map(|(i, (mut r, id))| {
                    r["requestId"] = id.unwrap_or_else(|| json!(format!("Q{i}")));
                    r
                })
                .collect()
        })
}

fn document() -> impl Strategy<Value = Value> {
    let envelope = (
        prop_oneof![8 => Just(json!("anvil-investigation-request")), 1 => any_json()],
        prop_oneof![8 => Just(json!(1)), 1 => any_json()],
        prop_oneof![8 => Just(None), 1 => any_json().prop_map(Some)],
        requests(),
        prop::option::weighted(0.05, (key(), any_json())),
    )
        .prop_map(|(format, version, run_id, requests, extra)| {
            let run_id = run_id.unwrap_or_else(|| json!(fixture().run_id));
            let mut d = json!({"format": format, "formatVersion": version,
                               "runId": run_id, "requests": requests});
            if let Some((k, v)) = extra {
                d[k] = v;
            }
            d
        });
    prop_oneof![9 => envelope, 1 => any_json()]
}

fn tree(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            tree(&path, out);
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_requests_are_answered_whole_or_refused_with_a_typed_code(doc in document()) {
        let f = fixture();
        match tools::query(&f.run, &doc) {
            Ok(result) => {
                let asked = doc["requests"].as_array().map_or(0, Vec::len);
                prop_assert_eq!(result.results.len(), asked, "a partial answer");
                let schema = tools::request_schema();
                let valid = jsonschema::validator_for(&schema).unwrap().is_valid(&doc);
                prop_assert!(valid, "accepted but invalid against the schema: {}", doc);
            }
            Err(e) => {
                prop_assert!(tools::ERROR_KINDS.contains(&e.kind()), "untyped code {}: {}", e.kind(), e);
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }
}

#[test]
fn the_repository_is_unchanged_after_the_random_batches() {
    // Runs after (or alongside) the property; either way the tree must be untouched.
    let f = fixture();
    let mut before = Vec::new();
    tree(&f.repo, &mut before);
    let doc = json!({"format": "anvil-investigation-request", "formatVersion": 1,
        "runId": f.run_id, "requests": [
            {"requestId": "A", "operation": "source.find_text", "arguments": {"text": "capture"}},
            {"requestId": "B", "operation": "database.lookup",
             "arguments": {"table": "payments", "filters": {"id": "1"}}}]});
    let answer = tools::query(&f.run, &doc).unwrap();
    assert_eq!(answer.results.len(), 2);
    let mut after = Vec::new();
    tree(&f.repo, &mut after);
    before.sort();
    after.sort();
    assert!(before == after, "the repository changed");
}
