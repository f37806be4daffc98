//! The per-case proposal schema and its agreement with the parser (R-DOC-4, 5, 6).

use anvil_bench::case::proposal::parse_proposal;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use anvil_bench::case::proposal::DocErrorKind;

use crate::support::{
    EMAIL_TARGET, UNIT_TARGET, World, frozen_unit, open_inferred_unit, proposal_bytes_refused,
    read_json, unit_proposal, write_proposal,
};
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
            name: "schema::the_deficiency_const_is_the_cases_own_not_the_skills_first_trigger",
            rules: &["R-DOC-4", "R-DOC-6"],
            run: deficiency_of_the_case,
        },
        Check {
            name: "schema::schema_and_parser_agree_on_claim_ids_at_the_edge_of_the_pattern",
            rules: &["R-DOC-6"],
            run: claim_id_edges,
        },
        Check {
            name: "schema::the_claim_definition_admits_no_unknown_field",
            rules: &["R-DOC-5"],
            run: claim_closed,
        },
        Check {
            name: "schema::a_struct_as_a_positional_array_is_refused_by_schema_and_parser_alike",
            rules: &["R-DOC-6"],
            run: positional,
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

/// annotate-unit opened on its second trigger (`unproven_inferred_value`): the schema fixes
/// that code, and the schema and the parser agree on both codes.
fn deficiency_of_the_case() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = open_inferred_unit(&w)?;
    let schema = load_schema(&run_dir);
    let fixed = &schema["properties"]["deficiency"]["const"];
    ensure!(
        fixed == "unproven_inferred_value",
        "the schema fixes deficiency {fixed}, not the case's unproven_inferred_value"
    );
    let run = crate::support::rails::load_run(&run_dir).map_err(|e| Failed::from(e.to_string()))?;
    for (deficiency, admissible) in [
        ("unproven_inferred_value", true),
        ("unit_ambiguous_field", false),
    ] {
        let doc = base(UNIT_TARGET, "annotate-unit", deficiency, "unit", json!("s"));
        let bytes = serde_json::to_vec(&doc).unwrap();
        let parsed = parse_proposal(&bytes, &run.doc, "output/proposal.json");
        ensure!(
            valid(&schema, &doc) == admissible && parsed.is_ok() == admissible,
            "deficiency {deficiency}: schema says {}, parser says {:?}, expected admissible = {admissible}",
            valid(&schema, &doc),
            parsed.err().map(|e| e.to_string())
        );
    }
    Ok(())
}

/// Grounding ids at the edge of the claim-id shape: an empty tail, another prefix, a
/// character outside the class. Schema and parser agree on each, both ways.
fn claim_id_edges() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let schema = load_schema(&opened.run_dir);
    let run = crate::support::rails::load_run(&opened.run_dir)
        .map_err(|e| Failed::from(e.to_string()))?;
    let mut accepted = 0;
    for id in [
        "cl-", "cl-a", "cl--", "cl-_", "CL-a", "cl-a.b", "cl-a b", "cl-é", "xcl-a", "cl",
    ] {
        let mut doc = base(
            UNIT_TARGET,
            "annotate-unit",
            "unit_ambiguous_field",
            "unit",
            json!("s"),
        );
        doc["grounding"]["unit"] = json!([id]);
        let bytes = serde_json::to_vec(&doc).unwrap();
        let parsed = parse_proposal(&bytes, &run.doc, "output/proposal.json");
        let schema_ok = valid(&schema, &doc);
        ensure!(
            schema_ok == parsed.is_ok(),
            "grounding id {id:?}: schema says {schema_ok}, parser says {:?}",
            parsed.err().map(|e| e.to_string())
        );
        accepted += usize::from(schema_ok);
    }
    ensure!(accepted == 3, "expected 3 admissible ids, {accepted} were");
    Ok(())
}

/// `$defs.claim` is closed like the claims.json parser: a claim with a field the parser
/// rejects (an agent-supplied `excerpt`, a `status`) is invalid against it.
fn claim_closed() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let schema = load_schema(&opened.run_dir);
    let mut claim_schema = schema["$defs"]["claim"].clone();
    claim_schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    let ok = json!({"id": "cl-1", "predicate": "field.unit", "value": "s", "artifactIds": ["ev-1"], "confidence": 0.5});
    ensure!(
        valid(&claim_schema, &ok),
        "test setup: the claim schema rejects a plain claim"
    );
    for (extra, value) in [
        ("excerpt", json!("timedelta(seconds=...)")),
        ("status", json!("accepted")),
    ] {
        let mut claim = ok.clone();
        claim[extra] = value;
        ensure!(
            !valid(&claim_schema, &claim),
            "the claim schema admits an unknown field `{extra}`"
        );
    }
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

/// serde reads a struct from a positional array of its fields too (the whole proposal, or
/// a nested struct such as `patch`); the schema says `type: object`, so the parser must
/// refuse both, at the struct's path, saying an object is expected, before anything is
/// frozen.
fn positional() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let schema = load_schema(&u.run);
    let good = unit_proposal("s", &[&u.claim]);
    ensure!(valid(&schema, &good), "fixture: the proposal is invalid");
    let fields = [
        "format",
        "formatVersion",
        "skill",
        "skillVersion",
        "deficiency",
        "target",
        "patch",
        "grounding",
        "confidence",
        "rationale",
    ];
    let mut whole: Vec<Value> = fields.iter().map(|f| good[*f].clone()).collect();
    whole[6] = json!([good["patch"]["target"], good["patch"]["set"]]);
    let mut nested = good.clone();
    nested["patch"] = whole[6].clone();
    for (doc, field) in [(Value::Array(whole), "."), (nested, "patch")] {
        ensure!(
            !valid(&schema, &doc),
            "the schema admits the positional form at `{field}`"
        );
        write_proposal(&u.run, &doc);
        let d = proposal_bytes_refused(&u.run, field, DocErrorKind::Shape)?;
        ensure!(
            d.reason.contains("expected an object"),
            "the refusal at `{field}` does not say an object is expected: {d}"
        );
    }
    Ok(())
}
