//! `OpenAPI` import: the real public descriptions import and detect (the summary a
//! maintainer reads is snapshotted), hand-written Swagger 2.0 and 3.0 JSON fixtures import
//! what they state, and malformed documents are refused naming the pointer.

mod openapi_support;

use std::path::Path;

use anvil_bench::air::openapi::{self, Document, OpenApiError};
use anvil_bench::air::{Air, Location, TargetKey};
use openapi_support::{REAL, cli, fixture, import_text, ok};
use serde_json::{Value, json};

#[test]
fn fixtures_equal_the_shared_originals() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs");
    if !shared.is_dir() {
        eprintln!("skipped: ../shared/specs is not beside the checkout");
        return;
    }
    for name in REAL {
        assert_eq!(
            std::fs::read(shared.join(name)).unwrap(),
            std::fs::read(fixture(name)).unwrap(),
            "{name} differs from shared/specs"
        );
    }
}

#[test]
fn real_documents_import_and_detect() {
    let tmp = tempfile::tempdir().unwrap();
    for name in REAL {
        let summary = ok(
            tmp.path(),
            &["detect", "--spec", fixture(name).to_str().unwrap()],
        );
        insta::assert_snapshot!(format!("detect_spec_{name}"), summary);
        let (_, imported) = openapi::import_file(&fixture(name)).unwrap();
        assert!(!imported.air.operations.is_empty(), "{name}");
        // `detect --air` works on what `air import` wrote.
        let air = tmp.path().join(format!("{name}.air.json"));
        ok(
            tmp.path(),
            &[
                "air",
                "import",
                fixture(name).to_str().unwrap(),
                "--out",
                air.to_str().unwrap(),
            ],
        );
        let plan: Value = serde_json::from_str(&ok(
            tmp.path(),
            &["detect", "--air", air.to_str().unwrap(), "--json"],
        ))
        .unwrap();
        let direct = anvil_bench::air::detect(&imported.air);
        assert_eq!(plan["deficiencies"].as_array().unwrap().len(), direct.len());
        assert_eq!(plan["airHash"], Value::from(imported.air.hash()));
    }
}

#[test]
fn swagger_2_imports_body_parameters_definitions_and_responses() {
    let (_, imported) = openapi::import_file(&fixture("swagger-2.0-orders.yaml")).unwrap();
    let air = &imported.air;
    assert_eq!(
        (air.service.id.as_str(), air.service.version.as_str()),
        ("orders-api", "2.3")
    );
    let ids: Vec<&str> = air.operations.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["createOrder", "get_orders", "uploadReceipt"]);

    let create = air.operation("createOrder").unwrap();
    let names = |loc: Location| -> Vec<&str> {
        create
            .fields
            .iter()
            .filter(|f| f.location == loc)
            .map(|f| f.name.as_str())
            .collect()
    };
    assert_eq!(names(Location::InputHeader), ["X-Trace-Id"]);
    assert_eq!(
        names(Location::InputBody),
        [
            "customerEmail",
            "items",
            "items[].sku",
            "items[].quantity",
            "deliveryWindow"
        ]
    );
    assert_eq!(
        names(Location::OutputBody),
        [
            "customerEmail",
            "items",
            "items[].sku",
            "items[].quantity",
            "deliveryWindow",
            "id",
            "total"
        ]
    );
    let email = create.field(Location::InputBody, "customerEmail").unwrap();
    assert!(email.required);
    assert_eq!(email.format.as_deref(), Some("email"));
    assert_eq!(email.sensitivity.as_deref(), Some("pii"));
    assert_eq!(
        email.pointer.as_deref(),
        Some("/definitions/NewOrder/properties/customerEmail")
    );
    let trace = create.field(Location::InputHeader, "X-Trace-Id").unwrap();
    assert_eq!(
        trace.description.as_deref(),
        Some("Correlates logs across services.")
    );
    assert_eq!(
        trace.pointer.as_deref(),
        Some("/paths/~1orders/parameters/0")
    );
    let window = create.field(Location::InputBody, "deliveryWindow").unwrap();
    assert_eq!(
        (window.ty.as_str(), window.unit.as_deref()),
        ("integer", None)
    );

    let errors: Vec<(&str, u16, Option<&str>, Option<bool>)> = create
        .errors
        .iter()
        .map(|e| (e.code.as_str(), e.status, e.message.as_deref(), e.retryable))
        .collect();
    assert_eq!(
        errors,
        [
            ("400", 400, Some("The order is malformed."), None),
            (
                "402",
                402,
                Some("Payment declined by the card issuer."),
                Some(false)
            ),
            ("503", 503, Some("Try again later."), None),
        ]
    );
    assert_eq!(
        create.errors[0].pointer.as_deref(),
        Some("/paths/~1orders/post/responses/400")
    );

    let list = air.operation("get_orders").unwrap();
    assert_eq!(
        list.description.as_deref(),
        Some("List orders, newest first.")
    );
    let limit = list.field(Location::InputQuery, "limit").unwrap();
    assert_eq!(
        (limit.unit.as_deref(), limit.format.as_deref()),
        (Some("count"), Some("int32"))
    );
    let status = list.field(Location::InputQuery, "status").unwrap();
    assert_eq!(status.ty, "array");
    assert_eq!(
        status.enum_values,
        Some(vec![json!("open"), json!("shipped")])
    );
    assert!(list.field(Location::OutputBody, "[].id").is_some());

    let upload = air.operation("uploadReceipt").unwrap();
    let file = upload.field(Location::InputBody, "file").unwrap();
    assert_eq!(file.ty, "file");
    assert!(
        upload
            .field(Location::InputPath, "orderId")
            .unwrap()
            .required
    );
    assert_eq!(upload.errors[0].message.as_deref(), Some("No such order."));

    // What the extensions state is not a deficiency.
    let plan: Vec<String> = anvil_bench::air::detect(air)
        .iter()
        .map(|d| format!("{} {}", d.target, d.code))
        .collect();
    assert!(
        !plan
            .iter()
            .any(|p| p.starts_with("op.createOrder.input.body.customerEmail unclassified")),
        "{plan:?}"
    );
    assert!(
        !plan
            .iter()
            .any(|p| p.starts_with("op.createOrder.error.402 ")),
        "{plan:?}"
    );
    assert!(
        plan.contains(&"op.createOrder.input.body.deliveryWindow unit_ambiguous_field".to_string()),
        "{plan:?}"
    );
}

#[test]
fn openapi_3_json_imports_cookies_alternatives_nullables_and_recursion() {
    let (doc, imported) = openapi::import_file(&fixture("widgets-3.0.json")).unwrap();
    assert_eq!(doc.format(), openapi::Format::Json);
    let op = imported.air.operation("getWidget").unwrap();
    let fields: Vec<String> = op
        .fields
        .iter()
        .map(|f| format!("{}.{}", f.location, f.name))
        .collect();
    assert_eq!(
        fields,
        [
            "input.path.id",
            "input.cookie.session",
            "input.header.X-Request-Timeout",
            "output.body.id",
            "output.body.shape",
            "output.body.shape.oneOf[0].radius",
            "output.body.shape.oneOf[1].side",
            "output.body.owner",
            "output.body.owner.email",
            "output.body.parent",
        ]
    );
    let shape = op.field(Location::OutputBody, "shape").unwrap();
    assert_eq!(
        shape.composition,
        Some(anvil_bench::air::Composition::OneOf)
    );
    assert!(op.field(Location::OutputBody, "owner").unwrap().nullable);
    assert_eq!(
        op.field(Location::InputCookie, "session")
            .unwrap()
            .sensitivity
            .as_deref(),
        Some("secret")
    );
    let codes: Vec<(&str, u16)> = op
        .errors
        .iter()
        .map(|e| (e.code.as_str(), e.status))
        .collect();
    assert_eq!(codes, [("4XX", 400)]);
    let notes: Vec<&str> = imported.notes.iter().map(|n| n.pointer.as_str()).collect();
    assert_eq!(
        notes,
        [
            "/components/schemas/Widget",
            "/paths/~1widgets~1{id}/get/responses/default"
        ]
    );
    // The target key of a cookie parameter parses back.
    let key: TargetKey = "op.getWidget.input.cookie.session".parse().unwrap();
    assert!(imported.air.contains(&key));
}

#[test]
fn openapi_3_1_type_lists_and_null_alternatives_are_nullable() {
    let air = import_text(
        "openapi: 3.1.0
info: {title: N, version: '1'}
paths:
  /n:
    get:
      operationId: n
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  a: {type: [integer, 'null'], description: Seconds to wait.}
                  b:
                    anyOf: [{$ref: '#/components/schemas/B'}, {type: 'null'}]
                  c: {const: fixed}
components:
  schemas:
    B: {type: object, properties: {x: {type: string}}}
",
    )
    .unwrap();
    let op = &air.operations[0];
    let a = op.field(Location::OutputBody, "a").unwrap();
    assert_eq!((a.ty.as_str(), a.nullable), ("integer", true));
    let b = op.field(Location::OutputBody, "b").unwrap();
    assert_eq!(
        (b.ty.as_str(), b.nullable, b.composition),
        ("object", true, None)
    );
    assert!(op.field(Location::OutputBody, "b.x").is_some());
    let c = op.field(Location::OutputBody, "c").unwrap();
    assert_eq!(c.enum_values, Some(vec![json!("fixed")]));
}

fn rejected(text: &str) -> OpenApiError {
    import_text(text).expect_err("the document should be rejected")
}

const HEAD: &str = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\n";

#[test]
fn malformed_documents_are_rejected_with_the_pointer_named() {
    let cases: [(String, &str, &str); 9] = [
        (
            format!(
                "{HEAD}paths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: {{$ref: '#/components/schemas/Missing'}}\n"
            ),
            "/paths/~1a/get/responses/200/content/application~1json/schema/$ref",
            "does not resolve",
        ),
        (
            format!(
                "{HEAD}paths:\n  /a:\n    get:\n      parameters: [{{$ref: '#/components/parameters/A'}}]\n      responses: {{}}\ncomponents:\n  parameters:\n    A: {{$ref: '#/components/parameters/B'}}\n    B: {{$ref: '#/components/parameters/A'}}\n"
            ),
            "/components/parameters/B/$ref",
            "$ref cycle",
        ),
        (
            format!(
                "{HEAD}paths:\n  /a:\n    post:\n      requestBody: {{content: {{application/json: {{schema: {{$ref: '#/components/schemas/A'}}}}}}}}\n      responses: {{}}\ncomponents:\n  schemas:\n    A: {{allOf: [{{$ref: '#/components/schemas/A'}}]}}\n"
            ),
            "/components/schemas/A/allOf/0",
            "contains itself",
        ),
        (
            format!(
                "{HEAD}paths:\n  /a:\n    get:\n      responses:\n        '200': {{$ref: 'common.yaml#/responses/Ok'}}\n"
            ),
            "/paths/~1a/get/responses/200/$ref",
            "external $ref `common.yaml#/responses/Ok`",
        ),
        (
            "openapi: 4.0.0\ninfo: {title: T, version: '1'}\npaths: {}\n".into(),
            "/openapi",
            "unsupported OpenAPI version `4.0.0`",
        ),
        (
            "swagger: '1.2'\ninfo: {title: T, version: '1'}\npaths: {}\n".into(),
            "/swagger",
            "unsupported Swagger version `1.2`",
        ),
        (
            "info: {title: T, version: '1'}\npaths: {}\n".into(),
            "",
            "neither `openapi` nor `swagger`",
        ),
        (
            format!(
                "{HEAD}paths:\n  /a:\n    get: {{operationId: same, responses: {{}}}}\n  /b:\n    get: {{operationId: same, responses: {{}}}}\n"
            ),
            "/paths/~1b/get/operationId",
            "duplicate operationId `same` (also at `#/paths/~1a/get/operationId`)",
        ),
        (
            format!(
                "{HEAD}paths:\n  /a:\n    get:\n      parameters: [{{name: t, in: query, schema: {{type: integer}}, x-anvil-unit: fortnights}}]\n      responses: {{}}\n"
            ),
            "/paths/~1a/get/parameters/0/x-anvil-unit",
            "`fortnights` is not one of",
        ),
    ];
    for (text, pointer, words) in &cases {
        let err = rejected(text);
        assert_eq!(err.pointer(), Some(*pointer), "{err}\n{text}");
        let message = err.to_string();
        assert!(message.contains(words), "{message}");
        assert!(message.contains(&format!("`#{pointer}`")), "{message}");
    }
    // Through the CLI: exit 1, the pointer on stderr, and a JSON error with it.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bad.yaml"), &cases[7].0).unwrap();
    let out = cli(tmp.path(), &["air", "import", "bad.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("#/paths/~1b/get/operationId"));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["pointer"], "/paths/~1b/get/operationId");
    assert_eq!(doc["error"]["kind"], "invalid_document");
}

#[test]
fn syntax_errors_name_the_line() {
    let err = Document::parse("openapi: 3.0.3\ninfo: [\n".into(), "x.yaml").unwrap_err();
    assert!(
        matches!(err, OpenApiError::Syntax { format: "YAML", .. }),
        "{err}"
    );
    let err =
        Document::parse("{\"openapi\": \"3.0.3\",\n \"info\": }".into(), "x.json").unwrap_err();
    assert!(
        matches!(
            err,
            OpenApiError::Syntax {
                format: "JSON",
                line: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn an_air_without_imported_members_keeps_its_hash() {
    // The members import adds are skipped when absent: the canonical form of an AIR
    // written before them is unchanged, so its hash is too.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/payments/air.json");
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let air = Air::load(&path).unwrap();
    assert_eq!(air.hash(), anvil_bench::canon::canonical_hash(&raw));
}
