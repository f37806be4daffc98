//! Strict parsing of agent documents: every malformed proposal, claim or evidence document
//! is rejected with the document, the field and the reason, and nothing panics
//! (R-PARSE-1, 3..7).

mod nested;

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::support::rails;
use anvil_bench::case::CaseError;
use anvil_bench::case::proposal::{DocError, DocErrorKind, parse_proposal};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{
    World, bytes_of, claim_input, ev, failed, frozen_unit, lifecycle_json, msg, out,
    proposal_bytes_refused, proposal_refused, proposals_refused, rail_cli, read_json, rejected_doc,
    stderr, stdout, unit_proposal, unit_research, write_json, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        // R-PARSE-1
        Check {
            name: "parsing::an_unknown_top_level_field_is_rejected",
            rules: &["R-PARSE-1"],
            run: || unknown_refused(|p| p["notes"] = json!("also consider ms"), "notes"),
        },
        Check {
            name: "parsing::an_unknown_field_inside_the_patch_is_rejected",
            rules: &["R-PARSE-1"],
            run: || unknown_refused(|p| p["patch"]["mode"] = json!("merge"), "mode"),
        },
        Check {
            name: "parsing::a_misspelt_field_is_an_unknown_field_not_a_default",
            rules: &["R-PARSE-1"],
            run: || {
                unknown_refused(
                    |p| {
                        let v = p["skillVersion"].take();
                        p.as_object_mut().unwrap().remove("skillVersion");
                        p["skill_version"] = v;
                    },
                    "skill_version",
                )
            },
        },
        Check {
            name: "parsing::an_unknown_field_in_a_hand_written_claims_or_evidence_json_is_rejected",
            rules: &["R-PARSE-1"],
            run: unknown_field_in_research_documents,
        },
        Check {
            name: "parsing::an_unknown_field_inside_evidence_verification_is_rejected",
            rules: &["R-PARSE-1"],
            run: nested::unknown_field_in_verification,
        },
        Check {
            name: "parsing::an_unknown_field_is_named_by_its_exact_path",
            rules: &["R-PARSE-7", "R-PARSE-1"],
            run: unknown_field_exact_path,
        },
        // R-PARSE-3
        Check {
            name: "parsing::a_confidence_above_one_is_rejected",
            rules: &["R-PARSE-3"],
            run: || {
                proposal_refused(
                    |p| p["confidence"] = json!(1.01),
                    "confidence",
                    DocErrorKind::Confidence,
                )
                .map(drop)
            },
        },
        Check {
            name: "parsing::a_negative_confidence_is_rejected",
            rules: &["R-PARSE-3"],
            run: || {
                proposal_refused(
                    |p| p["confidence"] = json!(-0.01),
                    "confidence",
                    DocErrorKind::Confidence,
                )
                .map(drop)
            },
        },
        Check {
            name: "parsing::confidences_zero_and_one_are_accepted",
            rules: &["R-PARSE-3"],
            run: confidence_bounds_accepted,
        },
        Check {
            name: "parsing::a_claim_confidence_outside_0_1_is_refused_at_the_rail_and_0_and_1_are_taken",
            rules: &["R-PARSE-3"],
            run: claim_confidence,
        },
        // R-PARSE-4
        Check {
            name: "parsing::a_target_of_unknown_kind_is_rejected",
            rules: &["R-PARSE-4"],
            run: || {
                for t in [
                    "field.capture_timeout",
                    "svc.payments",
                    "operation.create_payment",
                    "",
                ] {
                    proposal_refused(
                        |p| p["target"] = json!(t),
                        "target",
                        DocErrorKind::MalformedTarget,
                    )
                    .map_err(|e| failed(format!("target `{t}`: {}", msg(&e))))?;
                }
                Ok(())
            },
        },
        Check {
            name: "parsing::a_target_missing_a_coordinate_is_rejected",
            rules: &["R-PARSE-4"],
            run: || {
                for t in [
                    "op.create_payment.input.body",
                    "op.create_payment.input.body.",
                    "op..input.body.capture_timeout",
                    "op.create_payment.error.",
                    "op.create_payment.body.capture_timeout",
                ] {
                    proposal_refused(
                        |p| p["target"] = json!(t),
                        "target",
                        DocErrorKind::MalformedTarget,
                    )
                    .map_err(|e| failed(format!("target `{t}`: {}", msg(&e))))?;
                }
                Ok(())
            },
        },
        Check {
            name: "parsing::a_malformed_patch_target_is_rejected",
            rules: &["R-PARSE-4"],
            run: || {
                proposal_refused(
                    |p| p["patch"]["target"] = json!("op.create_payment.input.body"),
                    "patch.target",
                    DocErrorKind::MalformedTarget,
                )
                .map(drop)
            },
        },
        Check {
            name: "parsing::a_target_with_a_run_on_location_or_a_blank_in_its_name_is_rejected",
            rules: &["R-PARSE-4"],
            run: || {
                proposals_refused(
                    &[
                        "op.create_payment.input.bodycapture_timeout",
                        "op.create_payment.input.body_capture_timeout",
                        "op.create_payment.input.body.capture timeout",
                        "op.create_payment.input.body.capture_timeout ",
                        "op.create_payment.input.body.\tcapture_timeout",
                    ],
                    |p, t| {
                        p["target"] = json!(t);
                        p["patch"]["target"] = json!(t);
                    },
                    "target",
                    DocErrorKind::MalformedTarget,
                )
                .map(|_| ())
            },
        },
        // R-PARSE-5
        Check {
            name: "parsing::an_unknown_deficiency_code_is_rejected",
            rules: &["R-PARSE-5"],
            run: || {
                for d in ["unit_missing", "UNIT_AMBIGUOUS_FIELD", ""] {
                    proposal_refused(
                        |p| p["deficiency"] = json!(d),
                        "deficiency",
                        DocErrorKind::UnknownDeficiency,
                    )
                    .map_err(|e| failed(format!("deficiency `{d}`: {}", msg(&e))))?;
                }
                Ok(())
            },
        },
        Check {
            name: "parsing::a_deficiency_code_padded_or_respelled_is_rejected_not_normalised",
            rules: &["R-PARSE-5"],
            run: || {
                proposals_refused(
                    &[
                        " unit_ambiguous_field",
                        "unit_ambiguous_field\n",
                        "unit-ambiguous-field",
                    ],
                    |p, d| p["deficiency"] = json!(d),
                    "deficiency",
                    DocErrorKind::UnknownDeficiency,
                )
                .map(|_| ())
            },
        },
        // R-PARSE-6
        Check {
            name: "parsing::a_proposal_that_is_not_json_is_rejected",
            rules: &["R-PARSE-6", "R-PARSE-7"],
            run: not_json,
        },
        Check {
            name: "parsing::a_structurally_forbidden_patch_value_is_rejected",
            rules: &["R-PARSE-6"],
            run: forbidden_patch_values,
        },
        Check {
            name: "parsing::a_patch_set_that_is_not_an_object_is_rejected",
            rules: &["R-PARSE-6"],
            run: || {
                proposal_refused(
                    |p| p["patch"]["set"] = json!("unit=s"),
                    "patch.set",
                    DocErrorKind::Shape,
                )
                .map(drop)
            },
        },
        // R-PARSE-7
        Check {
            name: "parsing::a_wrong_type_is_rejected_naming_the_field",
            rules: &["R-PARSE-7"],
            run: || {
                proposal_refused(
                    |p| p["skillVersion"] = json!("1"),
                    "skillVersion",
                    DocErrorKind::Shape,
                )?;
                proposal_refused(
                    |p| p["grounding"]["unit"] = json!("cl-x"),
                    "grounding.unit",
                    DocErrorKind::Shape,
                )
                .map(drop)
            },
        },
        Check {
            name: "parsing::truncated_and_mangled_proposals_are_rejected_by_name_and_never_panic",
            rules: &["R-PARSE-7"],
            run: never_panics,
        },
        Check {
            name: "parsing::the_cli_rejects_a_malformed_proposal_with_exit_1_naming_document_and_field",
            rules: &["R-PARSE-7", "R-PARSE-3"],
            run: cli_names_field,
        },
    ]
}

/// The refusal is an unknown-field rejection of `document` that names `key`; lifecycle.json
/// is untouched.
fn unknown_rejection<T: std::fmt::Debug>(
    r: Result<T, CaseError>,
    document: &str,
    key: &str,
) -> Result<DocError, Failed> {
    match r {
        Err(CaseError::Document(d))
            if d.kind == DocErrorKind::UnknownField
                && d.document == document
                && d.field.contains(key)
                && d.reason.contains(key) =>
        {
            Ok(d)
        }
        other => {
            Err(format!("expected `{document}` rejected for unknown `{key}`, got {other:?}").into())
        }
    }
}

fn unknown_refused(mutate: impl FnOnce(&mut Value), key: &str) -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let mut p = unit_proposal("s", &[&u.claim]);
    mutate(&mut p);
    write_proposal(&u.run, &p);
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    unknown_rejection(
        rails::validate(&u.run, None, true),
        "output/proposal.json",
        key,
    )?;
    unknown_rejection(
        rails::validate(&u.run, None, false),
        "output/proposal.json",
        key,
    )?;
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc,
        "a rejected proposal changed lifecycle.json"
    );
    Ok(())
}

fn unknown_field_in_research_documents() -> Result<(), Failed> {
    // claims.json
    let w = World::new();
    let u = unit_research(&w)?;
    let mut doc = read_json(&out(&u.run, "claims.json"));
    doc["reviewedBy"] = json!("agent");
    write_json(&out(&u.run, "claims.json"), &doc);
    unknown_rejection(
        rails::freeze_research(&u.run, None),
        "output/claims.json",
        "reviewedBy",
    )?;
    // evidence.json
    let w = World::new();
    let u = unit_research(&w)?;
    let mut doc = read_json(&out(&u.run, "evidence.json"));
    doc["artifacts"][0]["strength"] = json!(0.99);
    write_json(&out(&u.run, "evidence.json"), &doc);
    unknown_rejection(
        rails::freeze_research(&u.run, None),
        "output/evidence.json",
        "strength",
    )?;
    ensure!(
        lifecycle_json(&u.run)["state"] == "open",
        "a rejected document was frozen"
    );
    Ok(())
}

/// The field of an unknown-field rejection is the path of that key: `patch.mode`, not
/// some other path that merely contains it.
fn unknown_field_exact_path() -> Result<(), Failed> {
    let mut wrong = Vec::new();
    let mut expect = |what: &str, d: DocError, want: &str| {
        if d.field != want {
            wrong.push(format!("{what}: field `{}`, expected `{want}`", d.field));
        }
    };
    for (mutate, want) in [
        (
            (|p: &mut Value| p["notes"] = json!("x")) as fn(&mut Value),
            "notes",
        ),
        (
            |p: &mut Value| p["patch"]["mode"] = json!("merge"),
            "patch.mode",
        ),
    ] {
        let w = World::new();
        let u = frozen_unit(&w)?;
        let mut p = unit_proposal("s", &[&u.claim]);
        mutate(&mut p);
        write_proposal(&u.run, &p);
        let d = unknown_rejection(
            rails::validate(&u.run, None, true),
            "output/proposal.json",
            want.rsplit('.').next().unwrap(),
        )?;
        expect("proposal.json", d, want);
    }
    let w = World::new();
    let u = unit_research(&w)?;
    let mut doc = read_json(&out(&u.run, "claims.json"));
    doc["claims"][0]["excerpt"] = json!("in seconds");
    write_json(&out(&u.run, "claims.json"), &doc);
    let d = unknown_rejection(
        rails::freeze_research(&u.run, None),
        "output/claims.json",
        "excerpt",
    )?;
    expect("claims.json", d, "claims[0].excerpt");
    let body = json!({"predicate": "field.unit", "value": "s", "artifactIds": [u.implementation], "excerpt": "x"});
    let d = unknown_rejection(
        rails::add_claim_json(&u.run, &body, None),
        "add-claim",
        "excerpt",
    )?;
    expect("add-claim body", d, "excerpt");
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("\n").into())
    }
}

fn confidence_bounds_accepted() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    for c in [0.0, 1.0] {
        let mut p = unit_proposal("s", &[&u.claim]);
        p["confidence"] = json!(c);
        write_proposal(&u.run, &p);
        rails::validate(&u.run, None, true)
            .map_err(|e| failed(format!("confidence {c} was rejected: {e}")))?;
    }
    Ok(())
}

fn claim_confidence() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    for c in [1.5, -0.2, f64::NAN, f64::INFINITY] {
        let mut input = claim_input("field.unit", json!("s"), &[&a]);
        input.confidence = c;
        rejected_doc(
            rails::add_claim(&run, input, None),
            "confidence",
            DocErrorKind::Confidence,
        )
        .map_err(|e| failed(format!("confidence {c}: {}", msg(&e))))?;
    }
    ensure!(
        !out(&run, "claims.json").exists(),
        "claims.json was written"
    );
    // The bounds themselves are inside the range.
    for c in [0.0, 1.0] {
        let mut input = claim_input("field.unit", json!("s"), &[&a]);
        input.confidence = c;
        rails::add_claim(&run, input, None)
            .map_err(|e| failed(format!("claim confidence {c} was rejected: {e}")))?;
    }
    Ok(())
}

fn not_json() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let valid = serde_json::to_string(&unit_proposal("s", &[&u.claim])).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "an unquoted patch value",
            valid.replace("\"unit\":\"s\"", "\"unit\":s").into_bytes(),
        ),
        (
            "a NaN",
            valid
                .replace("\"confidence\":0.9", "\"confidence\":NaN")
                .into_bytes(),
        ),
        ("a trailing comma", valid.replace("}}", "},}").into_bytes()),
        (
            "a truncated document",
            valid.as_bytes()[..valid.len() / 2].to_vec(),
        ),
        ("an empty file", vec![]),
        ("markdown", b"```json\n{}\n```\n".to_vec()),
        ("bytes that are not UTF-8", vec![0xff, 0xfe, b'{', b'}']),
    ];
    for (what, bytes) in cases {
        std::fs::write(out(&u.run, "proposal.json"), &bytes).unwrap();
        proposal_bytes_refused(&u.run, ".", DocErrorKind::Syntax)
            .map_err(|e| failed(format!("{what}: {}", msg(&e))))?;
    }
    Ok(())
}

fn forbidden_patch_values() -> Result<(), Failed> {
    for v in [
        json!({"value": "s"}),
        json!(["s"]),
        json!(null),
        json!(1),
        json!(true),
        json!(""),
        json!("seconds"),
    ] {
        proposal_refused(
            |p| p["patch"]["set"]["unit"] = v.clone(),
            "patch.set.unit",
            DocErrorKind::Value,
        )
        .map_err(|e| failed(format!("unit {v}: {}", msg(&e))))?;
    }
    Ok(())
}

/// Every JSON pointer of `v` (objects and arrays), root first.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                pointers(x, format!("{at}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn never_panics() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let case = crate::support::rails::load_run(&u.run).map_err(failed)?.doc;
    let valid = unit_proposal("s", &[&u.claim]);
    let doc = "output/proposal.json";
    let check = |what: &str, bytes: &[u8], must_fail: bool| -> Result<(), Failed> {
        let r = catch_unwind(AssertUnwindSafe(|| parse_proposal(bytes, &case, doc)))
            .map_err(|_| failed(format!("parsing panicked on {what}")))?;
        match r {
            Ok(_) if must_fail => Err(failed(format!("{what} was accepted"))),
            Ok(_) => Ok(()),
            Err(e) => {
                ensure!(
                    e.document == doc && !e.field.is_empty() && !e.reason.trim().is_empty(),
                    "{what}: rejection does not name document, field and reason: {e:?}"
                );
                Ok(())
            }
        }
    };
    // Every prefix of the document.
    let text = serde_json::to_string(&valid).unwrap();
    for n in 0..text.len() {
        check(&format!("the first {n} bytes"), &text.as_bytes()[..n], true)?;
    }
    // Every value replaced by every other type; every key removed; an unknown key added
    // to every object.
    let mut ptrs = Vec::new();
    pointers(&valid, String::new(), &mut ptrs);
    let replacements = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1e308),
        json!(""),
        json!("x"),
        json!([]),
        json!({}),
        json!([null]),
        json!({"a": 1}),
    ];
    for ptr in ptrs.iter().filter(|p| !p.is_empty()) {
        for r in &replacements {
            let mut v = valid.clone();
            *v.pointer_mut(ptr).unwrap() = r.clone();
            check(
                &format!("{ptr} = {r}"),
                serde_json::to_string(&v).unwrap().as_bytes(),
                false,
            )?;
        }
        let (parent, key) = ptr.rsplit_once('/').unwrap();
        let mut v = valid.clone();
        let removed = match v.pointer_mut(if parent.is_empty() { "" } else { parent }) {
            Some(Value::Object(m)) => m.remove(key).is_some(),
            Some(Value::Array(a)) => {
                a.remove(key.parse::<usize>().unwrap());
                true
            }
            _ => false,
        };
        if removed {
            check(
                &format!("{ptr} removed"),
                serde_json::to_string(&v).unwrap().as_bytes(),
                true,
            )?;
        }
    }
    for ptr in &ptrs {
        let mut v = valid.clone();
        if let Some(Value::Object(m)) = v.pointer_mut(ptr) {
            m.insert("zz_unknown".into(), json!(1));
            let bytes = serde_json::to_string(&v).unwrap();
            let r = catch_unwind(AssertUnwindSafe(|| {
                parse_proposal(bytes.as_bytes(), &case, doc)
            }))
            .map_err(|_| failed(format!("parsing panicked on an unknown key at `{ptr}`")))?;
            // `grounding` is a map of patched fields: an extra entry is a grounding error.
            match r {
                Ok(_) => return Err(format!("an unknown key at `{ptr}` was accepted").into()),
                Err(e) => ensure!(
                    e.to_string().contains("zz_unknown"),
                    "an unknown key at `{ptr}` was rejected without naming it: {e}"
                ),
            }
        }
    }
    Ok(())
}

fn cli_names_field() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let mut p = unit_proposal("s", &[&u.claim]);
    p["confidence"] = json!(7);
    write_proposal(&u.run, &p);
    let o = rail_cli(&w, "validate", &u.run, &[]);
    ensure!(o.status.code() == Some(1), "exit {:?}", o.status.code());
    let err = stderr(&o);
    ensure!(
        err.contains("output/proposal.json") && err.contains("confidence") && err.contains('7'),
        "stderr does not name document, field and value: {err}"
    );
    let o = rail_cli(&w, "validate", &u.run, &["--json"]);
    ensure!(o.status.code() == Some(1), "exit {:?}", o.status.code());
    let v: Value = serde_json::from_str(&stdout(&o))
        .map_err(|e| failed(format!("--json printed no JSON ({e}): {}", stdout(&o))))?;
    ensure!(
        v["error"]["kind"] == "rejected_document"
            && v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("confidence")),
        "--json error is {v}"
    );
    ensure!(
        lifecycle_json(&u.run)["state"] == "research_frozen",
        "a rejected proposal moved the run"
    );
    Ok(())
}
