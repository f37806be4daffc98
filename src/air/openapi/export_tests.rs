//! Export's unit tests: each splice lands where a person would put it, in the document's
//! own syntax, and nothing else moves.

use serde_json::{Value, json};

use super::*;
use crate::air::Provenance;
use crate::air::openapi::{Document, Format, import};

/// Refines `targets` (key, attribute, value) on the import of `text`, with provenance.
fn refine(text: &str, changes: &[(&str, &str, Value)]) -> (Document, Air) {
    let doc = Document::parse(text.to_string(), "spec").unwrap();
    let mut air = import(&doc).unwrap().air;
    for (i, (target, attr, value)) in changes.iter().enumerate() {
        let key: crate::air::TargetKey = target.parse().unwrap();
        let op = air
            .operations
            .iter_mut()
            .find(|o| Some(o.id.as_str()) == key.operation())
            .unwrap();
        match &key {
            crate::air::TargetKey::Operation { .. } => {
                op.description = value.as_str().map(str::to_string);
            }
            crate::air::TargetKey::Field { location, name, .. } => {
                let f = op
                    .fields
                    .iter_mut()
                    .find(|f| f.location == *location && f.name == name)
                    .unwrap();
                let s = value.as_str().map(str::to_string);
                match *attr {
                    "description" => f.description = s,
                    "unit" => f.unit = s,
                    _ => f.sensitivity = s,
                }
            }
            crate::air::TargetKey::Error { code, .. } => {
                op.errors
                    .iter_mut()
                    .find(|e| e.code == code)
                    .unwrap()
                    .retryable = value.as_bool();
            }
            crate::air::TargetKey::Capability { .. } => unreachable!(),
        }
        air.provenance.push(Provenance {
            target: target.to_string(),
            set: [(attr.to_string(), value.clone())].into_iter().collect(),
            case_key: format!("case-{i}"),
            run_id: format!("RUN{i}"),
            artifact_ids: vec![],
            tier: "auto".into(),
            approved_by: None,
            applied_at: "T".into(),
        });
    }
    (doc, air)
}

const YAML: &str = "openapi: 3.0.3
info: {title: T, version: '1'}
paths:
  /jobs:
    post:
      operationId: createJob
      description: |
        Creates a job.
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                timeout: {type: integer}
                owner:
                  $ref: '#/components/schemas/Email'
      responses:
        '429':
          description: Slow down.
components:
  schemas:
    Email:
      type: string
      description: An email.
";

#[test]
fn yaml_refinements_land_beside_their_nodes_in_the_documents_style() {
    let (doc, air) = refine(
        YAML,
        &[
            (
                "op.createJob",
                "description",
                json!("Queues a job.\nReturns its id."),
            ),
            ("op.createJob.input.body.timeout", "unit", json!("s")),
            ("op.createJob.input.body.owner", "sensitivity", json!("pii")),
            (
                "op.createJob.input.body.owner",
                "description",
                json!("Who is told."),
            ),
            ("op.createJob.error.429", "retryable", json!(true)),
        ],
    );
    let out = export(&doc, &air).unwrap();
    let expected = YAML
        .replace(
            "      description: |\n        Creates a job.\n",
            "      description: |-\n        Queues a job.\n        Returns its id.\n",
        )
        .replace(
            "timeout: {type: integer}",
            "timeout: {type: integer, x-anvil-unit: s}",
        )
        .replace(
            "$ref: '#/components/schemas/Email'\n",
            "$ref: '#/components/schemas/Email'\n                  description: Who is told.\n                  x-anvil-sensitivity: pii\n",
        )
        .replace(
            "          description: Slow down.\n",
            "          description: Slow down.\n          x-anvil-retryable: true\n",
        );
    let tail = "x-anvil-provenance:\n";
    assert!(out.text.starts_with(&expected), "{}", out.text);
    assert!(out.text[expected.len()..].starts_with(tail), "{}", out.text);
    assert_eq!(out.provenance, 5);
    // The shared Email schema was left alone: the use site overrides it.
    assert!(out.text.contains("      description: An email.\n"));
    let actions: Vec<EditAction> = out.edits.iter().map(|e| e.action).collect();
    assert_eq!(
        actions,
        [
            EditAction::Replace,
            EditAction::Insert,
            EditAction::Insert,
            EditAction::Insert,
            EditAction::Insert
        ]
    );
    // Exporting the result again with the same AIR changes nothing.
    let again = Document::parse(out.text.clone(), "spec").unwrap();
    assert_eq!(export(&again, &air).unwrap().text, out.text);
}

#[test]
fn json_refinements_keep_the_documents_indentation() {
    let source = "{\n  \"openapi\": \"3.1.0\",\n  \"info\": {\"title\": \"T\", \"version\": \"1\"},\n  \"paths\": {\n    \"/a\": {\n      \"get\": {\n        \"operationId\": \"getA\",\n        \"parameters\": [\n          {\"name\": \"limit\", \"in\": \"query\", \"schema\": {\"type\": \"integer\"}}\n        ],\n        \"responses\": {\n          \"503\": {\n            \"description\": \"Busy.\"\n          }\n        }\n      }\n    }\n  }\n}\n";
    let (doc, air) = refine(
        source,
        &[
            ("op.getA", "description", json!("Lists \"A\".")),
            ("op.getA.input.query.limit", "unit", json!("count")),
            ("op.getA.error.503", "retryable", json!(true)),
        ],
    );
    let out = export(&doc, &air).unwrap();
    let expected = source
        .replace(
            "\"schema\": {\"type\": \"integer\"}}",
            "\"schema\": {\"type\": \"integer\"}, \"x-anvil-unit\": \"count\"}",
        )
        .replace(
            "\"description\": \"Busy.\"\n",
            "\"description\": \"Busy.\",\n            \"x-anvil-retryable\": true\n",
        )
        .replace(
            "        }\n      }\n    }\n  }\n}\n",
            "        },\n        \"description\": \"Lists \\\"A\\\".\"\n      }\n    }\n  },\n  \"x-anvil-provenance\": [\n",
        );
    assert!(out.text.starts_with(&expected), "{}", out.text);
    assert!(out.text.ends_with("\n  ]\n}\n"), "{}", out.text);
    assert_eq!(
        Document::parse(out.text, "out").unwrap().format(),
        Format::Json
    );
}

#[test]
fn an_unrecorded_change_and_a_conflict_on_a_shared_node_are_refused() {
    let (doc, mut air) = refine(YAML, &[]);
    air.operations[0].fields[0].unit = Some("ms".into());
    let err = export(&doc, &air).unwrap_err();
    assert!(matches!(err, OpenApiError::Mismatch { .. }), "{err}");
    assert!(err.to_string().contains("no provenance record"), "{err}");

    let shared = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      parameters: [{$ref: '#/components/parameters/L'}]\n      responses: {}\n    put:\n      operationId: b\n      parameters: [{$ref: '#/components/parameters/L'}]\n      responses: {}\ncomponents:\n  parameters:\n    L: {name: l, in: query, schema: {type: integer}, description: Limit.}\n";
    let (doc, air) = refine(
        shared,
        &[
            ("op.a.input.query.l", "description", json!("One.")),
            ("op.b.input.query.l", "description", json!("Two.")),
        ],
    );
    // Different use sites (each operation's `$ref` item): both land, no conflict.
    let out = export(&doc, &air).unwrap();
    assert_eq!(out.edits.len(), 2);

    // One node (a property of a schema both bodies use) refined two ways is a conflict.
    let one_node = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    post:\n      operationId: a\n      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/S'}}}}\n      responses: {}\n    put:\n      operationId: b\n      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/S'}}}}\n      responses: {}\ncomponents:\n  schemas:\n    S: {type: object, properties: {x: {type: string}}}\n";
    let (doc, air) = refine(
        one_node,
        &[
            ("op.a.input.body.x", "description", json!("One.")),
            ("op.b.input.body.x", "description", json!("Two.")),
        ],
    );
    let err = export(&doc, &air).unwrap_err();
    assert!(
        err.to_string().contains("refined to different values"),
        "{err}"
    );
    // The same value from both is one edit, which says whom else it reaches.
    let (doc, air) = refine(
        one_node,
        &[
            ("op.a.input.body.x", "description", json!("One.")),
            ("op.b.input.body.x", "description", json!("One.")),
        ],
    );
    let out = export(&doc, &air).unwrap();
    assert_eq!(out.edits.len(), 1);
    assert_eq!(out.edits[0].also_affects, ["op.b.input.body.x"]);
}

#[test]
fn an_edit_that_would_change_more_than_its_node_is_refused() {
    // Editing an anchor changes every alias of it: verification sees the difference.
    let text = "a: &x {description: old}\nb: *x\n";
    let doc = Document::parse(text.to_string(), "spec").unwrap();
    let ops = [Op::Set {
        object: "/a".into(),
        key: "description".into(),
        value: json!("new"),
    }];
    let spliced = splice::apply(&doc, &ops).unwrap();
    assert_eq!(spliced, "a: &x {description: new}\nb: *x\n");
    let err = verify(&doc, &spliced, &ops).unwrap_err();
    assert_eq!(err.pointer(), Some("/b/description"), "{err}");
}

#[test]
fn crlf_line_ends_and_a_missing_final_newline_are_kept() {
    let text = YAML.replace('\n', "\r\n");
    let text = text.trim_end();
    let (doc, air) = refine(
        text,
        &[
            (
                "op.createJob",
                "description",
                json!("Queues a job.\nReturns its id."),
            ),
            ("op.createJob.error.429", "retryable", json!(false)),
        ],
    );
    let out = export(&doc, &air).unwrap();
    assert!(!out.text.ends_with('\n'), "{:?}", out.text);
    assert!(
        !out.text.replace("\r\n", "").contains('\n'),
        "a bare newline was written: {:?}",
        out.text
    );
    assert!(
        out.text
            .contains("description: |-\r\n        Queues a job.\r\n        Returns its id.\r\n")
    );
    assert!(
        out.text.contains(
            "          description: Slow down.\r\n          x-anvil-retryable: false\r\n"
        )
    );
}

#[test]
fn a_byte_order_mark_does_not_shift_the_edits() {
    for text in [
        format!("\u{feff}{YAML}"),
        format!("\u{feff}{YAML}").replace("Slow down.", "Slow down é."),
    ] {
        let (doc, air) = refine(
            &text,
            &[("op.createJob.error.429", "retryable", json!(true))],
        );
        let out = export(&doc, &air).unwrap();
        assert!(out.text.starts_with('\u{feff}'));
        assert!(
            out.text.contains(".\n          x-anvil-retryable: true\n"),
            "{}",
            out.text
        );
    }
}
