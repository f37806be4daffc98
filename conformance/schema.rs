//! The per-case proposal schema and its agreement with the parser (R-DOC-4, 5, 6).

use anvil_bench::case::proposal::parse_proposal;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{EMAIL_TARGET, UNIT_TARGET, World, read_json};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "schema::constants_fix_skill_version_deficiency_target_and_patch_target",
            rules: &["R-DOC-4"],
            run: constants,
        },
        Check {
            name: "schema::predicates_and_patch_keys_are_limited_to_the_skill",
            rules: &["R-DOC-5"],
            run: limits,
        },
        Check {
            name: "schema::schema_and_parser_agree_on_every_document",
            rules: &["R-DOC-6"],
            run: agreement,
        },
    ]
}

fn load_schema(run: &std::path::Path) -> Value {
    read_json(&run.join("expected-output.schema.json"))
}

fn valid(schema: &Value, doc: &Value) -> bool {
    jsonschema::validator_for(schema)
        .expect("schema compiles")
        .is_valid(doc)
}

fn base(target: &str, skill: &str, deficiency: &str, field: &str, value: Value) -> Value {
    json!({
        "format": "anvil-proposal", "formatVersion": 1,
        "skill": skill, "skillVersion": 1, "deficiency": deficiency,
        "target": target,
        "patch": {"target": target, "set": {field: value}},
        "grounding": {field: ["cl-1a2b"]},
        "confidence": 0.9, "rationale": "the conversion reads seconds"
    })
}

fn constants() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let schema = load_schema(&opened.run_dir);
    let p = &schema["properties"];
    ensure!(p["skill"]["const"] == "annotate-unit", "skill not fixed");
    ensure!(p["skillVersion"]["const"] == 1, "skillVersion not fixed");
    ensure!(
        p["deficiency"]["const"] == "unit_ambiguous_field",
        "deficiency not fixed"
    );
    ensure!(p["target"]["const"] == UNIT_TARGET, "target not fixed");
    ensure!(
        p["patch"]["properties"]["target"]["const"] == UNIT_TARGET,
        "patch.target not fixed"
    );
    let good = base(
        UNIT_TARGET,
        "annotate-unit",
        "unit_ambiguous_field",
        "unit",
        json!("s"),
    );
    ensure!(valid(&schema, &good), "the base proposal is invalid");
    for (pointer, value) in [
        ("/skill", json!("describe-field")),
        ("/skillVersion", json!(2)),
        ("/deficiency", json!("missing_field_description")),
        ("/target", json!("op.create_payment.input.body.amount")),
        (
            "/patch/target",
            json!("op.create_payment.input.body.amount"),
        ),
    ] {
        let mut doc = good.clone();
        *doc.pointer_mut(pointer).unwrap() = value;
        ensure!(
            !valid(&schema, &doc),
            "schema accepts a proposal with {pointer} changed"
        );
    }
    Ok(())
}

fn limits() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let schema = load_schema(&opened.run_dir);
    let predicates = &schema["$defs"]["claim"]["properties"]["predicate"]["enum"];
    ensure!(
        predicates == &json!(["field.unit", "field.conversion", "field.constraint"]),
        "claim predicates are {predicates}"
    );
    let set = &schema["properties"]["patch"]["properties"]["set"];
    ensure!(
        set["additionalProperties"] == false,
        "patch.set admits other keys"
    );
    let keys: Vec<&String> = set["properties"].as_object().unwrap().keys().collect();
    ensure!(keys == ["unit"], "patch.set keys are {keys:?}");
    let good = base(
        UNIT_TARGET,
        "annotate-unit",
        "unit_ambiguous_field",
        "unit",
        json!("s"),
    );
    for extra in ["description", "type", "required"] {
        let mut doc = good.clone();
        doc["patch"]["set"][extra] = json!("x");
        ensure!(!valid(&schema, &doc), "schema accepts patch.set.{extra}");
    }
    // A claim with an out-of-vocabulary predicate is invalid against the claim definition.
    let mut claim_schema = schema["$defs"]["claim"].clone();
    claim_schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    let claim = json!({"id": "cl-1", "predicate": "field.description", "value": "x", "artifactIds": ["ev-1"], "confidence": 0.5});
    ensure!(
        !valid(&claim_schema, &claim),
        "claim schema accepts an outside predicate"
    );
    let ok = json!({"id": "cl-1", "predicate": "field.conversion", "value": "x", "artifactIds": ["ev-1"], "confidence": 0.5});
    ensure!(
        valid(&claim_schema, &ok),
        "claim schema rejects a supporting predicate"
    );
    Ok(())
}

/// Documents for one case: the valid base and many variations, some valid, most not.
fn variations(
    base: &Value,
    field: &str,
    good_values: &[Value],
    bad_values: &[Value],
) -> Vec<Value> {
    let mut docs = vec![base.clone()];
    let mut with = |pointer: &str, value: Value| {
        let mut d = base.clone();
        if let Some(slot) = d.pointer_mut(pointer) {
            *slot = value;
        } else {
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            d.pointer_mut(parent).unwrap()[key] = value;
        }
        docs.push(d);
    };
    for v in good_values.iter().chain(bad_values) {
        with(&format!("/patch/set/{field}"), v.clone());
    }
    with("/confidence", json!(0));
    with("/confidence", json!(1));
    with("/confidence", json!(1.5));
    with("/confidence", json!(-0.1));
    with("/confidence", json!("0.9"));
    with("/formatVersion", json!(2));
    with("/format", json!("proposal"));
    with("/target", json!("field.x"));
    with("/patch/target", json!("op.create_payment"));
    with("/extra", json!(1));
    with("/patch/extra", json!(1));
    with("/patch/set/type", json!("integer"));
    with("/patch/set", json!({}));
    with("/grounding", json!({}));
    with(&format!("/grounding/{field}"), json!([]));
    with(&format!("/grounding/{field}"), json!(["ev-1"]));
    with(&format!("/grounding/{field}"), json!(["cl-1", "cl-1"]));
    with(&format!("/grounding/{field}"), json!(["cl-1", "cl-2"]));
    with("/grounding/other", json!(["cl-1"]));
    with("/rationale", json!(null));
    with("/rationale", json!(""));
    with("/skillVersion", json!("1"));
    docs.push({
        let mut d = base.clone();
        d.as_object_mut().unwrap().remove("rationale");
        d
    });
    docs
}

fn agreement() -> Result<(), Failed> {
    let w = World::new();
    let cases = [
        (
            "annotate-unit",
            UNIT_TARGET,
            "unit_ambiguous_field",
            "unit",
            vec![json!("s"), json!("ms"), json!("count")],
            vec![json!("seconds"), json!(5), json!(null), json!(["s"])],
        ),
        (
            "classify-sensitivity",
            EMAIL_TARGET,
            "unclassified_sensitive_field",
            "sensitivity",
            vec![json!("pii"), json!("none")],
            vec![json!("PII"), json!(true), json!({"class": "pii"})],
        ),
        (
            "enrich-error",
            "op.create_payment.error.CARD_DECLINED",
            "error_retryability_unclear",
            "retryable",
            vec![json!(true), json!(false)],
            vec![json!("false"), json!(0), json!(null)],
        ),
        (
            "describe-operation",
            "op.get_payment",
            "missing_operation_description",
            "description",
            vec![json!("Returns one payment by id."), json!(" x ")],
            vec![json!(""), json!("   "), json!(3)],
        ),
    ];
    let mut checked = 0;
    for (skill, target, deficiency, field, good, bad) in cases {
        let opened = anvil_bench::case::open(&w.request(skill, target))
            .map_err(|e| Failed::from(e.to_string()))?;
        let run = crate::support::rails::load_run(&opened.run_dir)
            .map_err(|e| Failed::from(e.to_string()))?;
        let schema = load_schema(&opened.run_dir);
        let base = base(target, skill, deficiency, field, good[0].clone());
        let mut saw_valid = 0;
        let mut saw_invalid = 0;
        for doc in variations(&base, field, &good, &bad) {
            let schema_ok = valid(&schema, &doc);
            let bytes = serde_json::to_vec(&doc).unwrap();
            let parsed = parse_proposal(&bytes, &run.doc, "output/proposal.json");
            ensure!(
                schema_ok == parsed.is_ok(),
                "{skill}: schema says {schema_ok}, parser says {:?} for {doc}",
                parsed.err().map(|e| e.to_string())
            );
            if schema_ok {
                saw_valid += 1;
            } else {
                saw_invalid += 1;
            }
            checked += 1;
        }
        ensure!(
            saw_valid >= 3 && saw_invalid >= 15,
            "{skill}: too few of each ({saw_valid} valid, {saw_invalid} invalid)"
        );
    }
    ensure!(checked > 100, "only {checked} documents checked");
    Ok(())
}
