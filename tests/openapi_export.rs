//! `OpenAPI` export: import → export reproduces every input byte for byte (CRLF, no final
//! newline and a byte-order mark included), refinements change only their nodes and read
//! back as the refined AIR, and an AIR from another document is refused.

mod openapi_support;

use anvil_bench::air::openapi::{self, OpenApiError};
use anvil_bench::air::{Air, Provenance, TargetKey};
use openapi_support::{REAL, WRITTEN, fixture, import_text, ok, parse};
use serde_json::{Value, json};

/// The inputs of the byte-identity check: every fixture, and variants with CRLF line ends,
/// no final newline, and a byte-order mark.
fn identity_inputs() -> Vec<(String, String)> {
    let mut inputs = Vec::new();
    for name in REAL.iter().chain(WRITTEN.iter()) {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let ext = if name.ends_with(".json") {
            "json"
        } else {
            "yaml"
        };
        inputs.push((format!("crlf-{name}"), text.replace('\n', "\r\n")));
        inputs.push((format!("bare-{name}"), text.trim_end().to_string()));
        inputs.push((format!("bom-{name}.{ext}"), format!("\u{feff}{text}")));
        inputs.push((name.to_string(), text));
    }
    inputs
}

#[test]
fn import_then_export_without_refinements_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (name, text) in identity_inputs() {
        let spec = dir.join(&name);
        std::fs::write(&spec, &text).unwrap();
        let air = dir.join(format!("{name}.air.json"));
        let out = dir.join(format!("out-{name}"));
        ok(
            dir,
            &[
                "air",
                "import",
                spec.to_str().unwrap(),
                "--out",
                air.to_str().unwrap(),
            ],
        );
        ok(
            dir,
            &[
                "air",
                "export",
                "--spec",
                spec.to_str().unwrap(),
                "--air",
                air.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert!(
            std::fs::read(&out).unwrap() == text.as_bytes(),
            "{name}: export without refinements changed the document"
        );
    }
}

/// Line diff (LCS): the lines only in `a`, and the lines only in `b`.
fn line_diff<'a>(a: &'a str, b: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    let (x, y): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut lcs = vec![vec![0u32; y.len() + 1]; x.len() + 1];
    for i in (0..x.len()).rev() {
        for j in (0..y.len()).rev() {
            lcs[i][j] = if x[i] == y[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut removed, mut added) = (0, 0, Vec::new(), Vec::new());
    while i < x.len() || j < y.len() {
        if i < x.len() && j < y.len() && x[i] == y[j] {
            i += 1;
            j += 1;
        } else if j < y.len() && (i == x.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            added.push(y[j]);
            j += 1;
        } else {
            removed.push(x[i]);
            i += 1;
        }
    }
    (removed, added)
}

/// Sets `attr` of `target` in `air` and records the application as `case close` would.
fn refine(air: &mut Air, target: &str, attr: &str, value: Value, run: &str) {
    let key: TargetKey = target.parse().unwrap();
    let op = air
        .operations
        .iter_mut()
        .find(|o| Some(o.id.as_str()) == key.operation())
        .unwrap();
    let text = value.as_str().map(str::to_string);
    match (&key, attr) {
        (TargetKey::Operation { .. }, _) => op.description = text,
        (TargetKey::Field { location, name, .. }, _) => {
            let f = op
                .fields
                .iter_mut()
                .find(|f| f.location == *location && f.name == name)
                .unwrap();
            match attr {
                "description" => f.description = text,
                "unit" => f.unit = text,
                _ => f.sensitivity = text,
            }
        }
        (TargetKey::Error { code, .. }, _) => {
            op.errors
                .iter_mut()
                .find(|e| e.code == code)
                .unwrap()
                .retryable = value.as_bool();
        }
        _ => unreachable!(),
    }
    air.provenance.push(Provenance {
        target: target.into(),
        set: [(attr.to_string(), value)].into_iter().collect(),
        case_key: format!("case-for-{attr}"),
        run_id: run.into(),
        artifact_ids: vec!["ev-1".into()],
        tier: "auto".into(),
        approved_by: None,
        applied_at: "2026-01-02T03:04:05Z".into(),
    });
}

#[test]
fn export_with_refinements_changes_only_the_refined_nodes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = fixture("petstore-openapi-3.0.yaml");
    let original = std::fs::read_to_string(&spec).unwrap();
    let (_, imported) = openapi::import_file(&spec).unwrap();
    let mut air = imported.air.clone();
    let refinements = [
        (
            "op.getPetById",
            "description",
            json!("Returns one pet, with its tags and category."),
        ),
        (
            "op.findPetsByStatus.input.query.status",
            "sensitivity",
            json!("none"),
        ),
        ("op.getPetById.error.404", "retryable", json!(true)),
        (
            "op.addPet.input.body.category.name",
            "description",
            json!("Shown to shoppers: \"Dogs\", \"Cats\"."),
        ),
        (
            "op.deleteUser.input.path.username",
            "sensitivity",
            json!("pii"),
        ),
    ];
    for (i, (target, attr, value)) in refinements.iter().enumerate() {
        assert!(
            air.contains(&target.parse().unwrap()),
            "{target} not imported"
        );
        refine(&mut air, target, attr, value.clone(), &format!("RUN{i}"));
    }
    let refined = dir.join("refined.json");
    anvil_bench::fsio::write_json_atomic(&refined, &air).unwrap();
    let out = dir.join("petstore.refined.yaml");
    let report: Value = serde_json::from_str(&ok(
        dir,
        &[
            "air",
            "export",
            "--spec",
            spec.to_str().unwrap(),
            "--air",
            refined.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ],
    ))
    .unwrap();
    assert_eq!(report["format"], "anvil-air-export");
    assert_eq!(report["edits"].as_array().unwrap().len(), 5);
    assert_eq!(report["provenance"], 5);
    let exported = std::fs::read_to_string(&out).unwrap();

    // The diff: one description line replaced; every added line is a refinement or the
    // provenance list.
    let (removed, added) = line_diff(&original, &exported);
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert!(
        removed[0]
            .trim_start()
            .starts_with("description: Returns a single pet"),
        "{removed:?}"
    );
    let allowed = |line: &str| {
        let t = line.trim_start();
        t.starts_with("description: Returns one pet")
            || t == "x-anvil-sensitivity: none"
            || t == "x-anvil-sensitivity: pii"
            || t == "x-anvil-retryable: true"
            || t == "description: \"Shown to shoppers: \\\"Dogs\\\", \\\"Cats\\\".\""
            || t == "x-anvil-provenance:"
            || (t.starts_with("- {target: op.") && t.contains("runId: RUN"))
    };
    for line in &added {
        assert!(allowed(line), "unexpected added line {line:?}\n{added:#?}");
    }
    assert_eq!(added.len(), 1 + 4 + 1 + 5, "{added:#?}");

    // Read back, every refined value is there; every other value is unchanged except on
    // the elements that share a refined node (and say so).
    let (_, again) = openapi::import_file(&out).unwrap();
    let shared: Vec<String> = report["edits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["alsoAffects"].as_array().cloned().unwrap_or_default())
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(
        shared.contains(&"op.updatePet.input.body.category.name".to_string()),
        "{shared:?}"
    );
    let strip = |a: &Air| {
        let mut v = serde_json::to_value(a).unwrap();
        v["source"] = Value::Null;
        v["provenance"] = Value::Null;
        v
    };
    let mut expected = air.clone();
    for op in &mut expected.operations {
        for f in &mut op.fields {
            let key = format!("op.{}.{}.{}", op.id, f.location, f.name);
            if shared.contains(&key) && f.name.ends_with("category.name") {
                f.description = Some("Shown to shoppers: \"Dogs\", \"Cats\".".into());
            }
        }
    }
    assert_eq!(strip(&again.air), strip(&expected));
    assert_eq!(
        again.air.source.as_ref().unwrap().sha256,
        anvil_bench::canon::bytes_hash(exported.as_bytes())
    );
}

#[test]
fn export_refuses_an_air_from_another_document() {
    let pet = parse(&std::fs::read_to_string(fixture("petstore-openapi-3.0.yaml")).unwrap());
    let museum =
        import_text(&std::fs::read_to_string(fixture("museum-openapi-3.1.yaml")).unwrap()).unwrap();
    let err = openapi::export(&pet, &museum).unwrap_err();
    assert!(matches!(err, OpenApiError::Mismatch { .. }), "{err}");
}

#[test]
fn swagger_2_refinements_land_in_definitions_parameters_and_responses() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = fixture("swagger-2.0-orders.yaml");
    let original = std::fs::read_to_string(&spec).unwrap();
    let (_, imported) = openapi::import_file(&spec).unwrap();
    let mut air = imported.air.clone();
    refine(
        &mut air,
        "op.createOrder.input.body.deliveryWindow",
        "unit",
        json!("h"),
        "R1",
    );
    refine(
        &mut air,
        "op.uploadReceipt.error.404",
        "retryable",
        json!(false),
        "R2",
    );
    refine(
        &mut air,
        "op.get_orders.input.query.status",
        "description",
        json!("Only orders in these states."),
        "R3",
    );
    let refined = dir.join("refined.json");
    anvil_bench::fsio::write_json_atomic(&refined, &air).unwrap();
    let out = dir.join("orders.refined.yaml");
    ok(
        dir,
        &[
            "air",
            "export",
            "--spec",
            spec.to_str().unwrap(),
            "--air",
            refined.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let exported = std::fs::read_to_string(&out).unwrap();
    let (removed, added) = line_diff(&original, &exported);
    assert_eq!(removed, ["        \"404\": {$ref: '#/responses/NotFound'}"]);
    assert_eq!(
        &added[..4],
        [
            "          description: Only orders in these states.",
            "        \"404\": {$ref: '#/responses/NotFound', x-anvil-retryable: false}",
            "        x-anvil-unit: h",
            "x-anvil-provenance:",
        ]
    );
    assert_eq!(added.len(), 4 + 3, "{added:#?}");
    // The shared response stays as it was; the use site carries the value.
    assert!(exported.contains("  NotFound:\n    description: No such order.\n"));
    let again = openapi::import(&parse(&exported)).unwrap().air;
    let op = again.operation("uploadReceipt").unwrap();
    assert_eq!(op.errors[0].retryable, Some(false));
    let window = again
        .operation("createOrder")
        .unwrap()
        .field(anvil_bench::air::Location::InputBody, "deliveryWindow")
        .unwrap();
    assert_eq!(window.unit.as_deref(), Some("h"));
}

#[test]
fn a_json_description_is_refined_as_json() {
    let spec = fixture("widgets-3.0.json");
    let original = std::fs::read_to_string(&spec).unwrap();
    let (doc, imported) = openapi::import_file(&spec).unwrap();
    let mut air = imported.air.clone();
    refine(
        &mut air,
        "op.getWidget.input.header.X-Request-Timeout",
        "unit",
        json!("ms"),
        "R1",
    );
    refine(
        &mut air,
        "op.getWidget.error.4XX",
        "retryable",
        json!(false),
        "R2",
    );
    refine(
        &mut air,
        "op.getWidget.output.body.owner.email",
        "sensitivity",
        json!("pii"),
        "R3",
    );
    let out = openapi::export(&doc, &air).unwrap();
    let (removed, added) = line_diff(&original, &out.text);
    assert_eq!(
        removed,
        [
            "          {\"name\": \"X-Request-Timeout\", \"in\": \"header\", \"schema\": {\"type\": \"integer\"}}",
            "            \"description\": \"Client error.\"",
            "              \"email\": {\"type\": \"string\"}",
            "  }",
        ]
    );
    assert_eq!(
        &added[..6],
        [
            "          {\"name\": \"X-Request-Timeout\", \"in\": \"header\", \"schema\": {\"type\": \"integer\"}, \"x-anvil-unit\": \"ms\"}",
            "            \"description\": \"Client error.\",",
            "            \"x-anvil-retryable\": false",
            "              \"email\": {\"type\": \"string\", \"x-anvil-sensitivity\": \"pii\"}",
            "  },",
            "  \"x-anvil-provenance\": [",
        ]
    );
    let value: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(value["x-anvil-provenance"].as_array().unwrap().len(), 3);
}
