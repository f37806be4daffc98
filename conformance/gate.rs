//! The engine's gate (R-GATE-1, R-GATE-2): a value reaches `auto` only when the lines its
//! claims cite state it, by the skill's attestation rules (data in the contract), and no two
//! verified frozen excerpts state different values for its predicate.

mod conflicts;
mod grounding;
mod languages;

use std::path::PathBuf;

use crate::support::rails::close;
use anvil_bench::case::attest::AttestStatus;
use anvil_bench::case::finalize::Status;
use anvil_bench::case::research::ResearchRecord;
use anvil_bench::driver::scripted::Agent;
use anvil_bench::reconcile::{CloseDoc, CloseRequest, Tier};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{UNIT_TARGET, World, failed, open_inferred_unit, read_json};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    let mut all = vec![
        Check {
            name: "gate::over_claiming_a_wrong_vocabulary_value_on_regions_naming_the_field_never_reaches_auto",
            rules: &["R-GATE-1"],
            run: over_claiming,
        },
        Check {
            name: "gate::unverified_excerpts_never_lift_a_verified_field_over_its_strength_bar",
            rules: &["R-GATE-1"],
            run: unverified_excerpts_never_lift_a_verified_field_over_its_strength_bar,
        },
        Check {
            name: "gate::only_the_proposals_own_grounding_claims_attest_its_value",
            rules: &["R-GATE-1"],
            run: only_the_proposals_own_grounding_claims_attest_its_value,
        },
        Check {
            name: "gate::a_value_stated_only_by_a_comment_beside_unrelated_code_is_not_auto",
            rules: &["R-GATE-1"],
            run: padded_comment,
        },
        Check {
            name: "gate::close_json_names_the_rule_and_line_that_attest_or_says_none_matched",
            rules: &["R-GATE-1"],
            run: explained,
        },
        Check {
            name: "gate::a_supported_value_its_cited_lines_do_not_state_is_not_auto",
            rules: &["R-GATE-1"],
            run: supported_unattested,
        },
        Check {
            name: "gate::a_description_is_attested_by_its_content_words_in_the_cited_lines",
            rules: &["R-GATE-1"],
            run: description_words,
        },
    ];
    all.extend(conflicts::checks());
    all.extend(grounding::checks());
    all.extend(languages::checks());
    all
}

/// Writes `rel` (relative to the repository) in `w`.
pub fn write_repo(w: &World, rel: &str, text: &str) {
    let path = w.repo().join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Makes the example state no unit for `capture_timeout` (its seconds idioms rewritten to a
/// unit-free helper), so a trial's own files are the repository's only statement of it:
/// the whole-repository scan (R-GATE-2) then has nothing to weigh against them.
pub fn unit_free(w: &World) {
    for rel in ["src/payments/service.py", "tests/test_capture.py"] {
        let path = w.repo().join(rel);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("timedelta(seconds=", "window_of(")
            .replace(
                "The wire value is whole seconds.",
                "The wire value is the window.",
            )
            .replace("_is_seconds", "_is_applied");
        std::fs::write(path, text).unwrap();
    }
}

/// What one scripted case ended as.
pub struct Outcome {
    pub run: PathBuf,
    pub research: ResearchRecord,
    pub close: CloseDoc,
}

impl Outcome {
    /// The stage-1 attestation of the (first) claim.
    pub fn attestation(&self) -> Result<AttestStatus, Failed> {
        self.research
            .claims
            .first()
            .and_then(|c| c.attestation.as_ref())
            .map(|a| a.status)
            .ok_or_else(|| failed(format!("no attestation recorded: {:?}", self.research)))
    }

    pub fn reasons(&self) -> String {
        self.close.reasons.join(" | ")
    }
}

fn predicate_of(skill: &str) -> &'static str {
    match skill {
        "annotate-unit" => "field.unit",
        "enrich-error" => "error.retryable",
        "classify-sensitivity" => "field.sensitivity",
        "describe-operation" => "operation.description",
        _ => "field.description",
    }
}

/// Opens `skill` on `target`, cites `regions`, claims `value` on them and proposes it
/// (or, with `status`, finalizes that status after freezing), then closes.
pub fn case(
    w: &World,
    skill: &str,
    target: &str,
    deficiency: Option<&str>,
    regions: &[(&str, u32, u32)],
    value: Value,
    status: Option<Status>,
) -> Result<Outcome, Failed> {
    let mut req = w.request(skill, target);
    req.deficiency = deficiency.map(str::to_string);
    let run = anvil_bench::case::open(&req).map_err(failed)?.run_dir;
    let agent = Agent::new(anvil_bench::case::RunHandle::open(&run).map_err(failed)?);
    let ids = regions
        .iter()
        .map(|(p, a, b)| agent.add_evidence(p, Some((*a, *b))))
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let claim = agent
        .add_claim(predicate_of(skill), value.clone(), &refs, 0.9)
        .map_err(failed)?;
    let research = agent.freeze_research().map_err(failed)?;
    match status {
        None => {
            agent.propose(value, &[&claim], "trial").map_err(failed)?;
            let v = agent.validate().map_err(failed)?;
            ensure!(
                v.verdict == anvil_bench::case::validate::Verdict::Pass,
                "the proposal does not validate, so the gate is not what is tested: {v:?}"
            );
            agent.finalize(None, None).map_err(failed)?;
        }
        Some(s) => {
            agent.finalize(Some(s), Some("trial")).map_err(failed)?;
        }
    }
    let close = close(&run, &CloseRequest::default(), None).map_err(failed)?;
    passes_agrees_with_reasons(&close)?;
    Ok(Outcome {
        run,
        research,
        close,
    })
}

/// close.json's per-value verdict agrees with the reasons close gave: a (single) value
/// `passes` the gate exactly when no gate reason (R-GATE-1 unattested or under strength,
/// R-GATE-2 conflict) holds it back.
fn passes_agrees_with_reasons(close: &CloseDoc) -> Result<(), Failed> {
    let held = close
        .reasons
        .iter()
        .any(|r| r.contains("R-GATE") || r.contains("only at strength"));
    for g in &close.gate {
        ensure!(
            g.passes != held,
            "`{}` passes: {} but the reasons are {:?}",
            g.field,
            g.passes,
            close.reasons
        );
    }
    Ok(())
}

/// The unit case on `capture_timeout` citing `regions` for `value`.
pub fn unit_case(w: &World, regions: &[(&str, u32, u32)], value: &str) -> Result<Outcome, Failed> {
    case(
        w,
        "annotate-unit",
        UNIT_TARGET,
        None,
        regions,
        json!(value),
        None,
    )
}

/// `right` is attested and reconciles to auto; `wrong` is not attested and reconciles to
/// review with the gate's reason — each in a fresh world where `files` were written.
pub fn right_and_wrong(
    files: &[(&str, &str)],
    regions: &[(&str, u32, u32)],
    right: &str,
    wrong: &str,
) -> Result<(), Failed> {
    let world = || {
        let w = World::new();
        unit_free(&w);
        for (rel, text) in files {
            write_repo(&w, rel, text);
        }
        w
    };
    let w = world();
    let ok = unit_case(&w, regions, right)?;
    ensure!(
        ok.attestation()? == AttestStatus::Attested,
        "{right} is not attested: {:?}",
        ok.research.claims
    );
    ensure!(
        ok.close.tier == Some(Tier::Auto),
        "{right} does not reach auto: {}",
        ok.reasons()
    );
    let w = world();
    let bad = unit_case(&w, regions, wrong)?;
    ensure!(
        bad.attestation()? == AttestStatus::Unattested,
        "the wrong unit {wrong} is attested: {:?}",
        bad.research.claims
    );
    ensure!(
        bad.close.tier == Some(Tier::Review) && bad.reasons().contains("R-GATE-1"),
        "the wrong unit {wrong} is not held at review by the gate: {:?} {}",
        bad.close.tier,
        bad.reasons()
    );
    Ok(())
}

/// Regions of the example that name `capture_timeout` (what an over-claimer would cite).
const NAMING_UNIT: &[(&str, u32, u32)] = &[
    ("src/payments/service.py", 26, 29),
    ("src/payments/service.py", 32, 39),
    ("tests/test_capture.py", 6, 8),
    ("docs/payments.md", 3, 4),
];

fn over_claiming() -> Result<(), Failed> {
    // Units: every vocabulary value but the right one, on every region naming the field.
    let vocabulary: Vec<String> = anvil_bench::skill::vocab::UNITS
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    for wrong in vocabulary.iter().filter(|u| *u != "s") {
        let w = World::new();
        let o = unit_case(&w, NAMING_UNIT, wrong)?;
        ensure!(
            o.close.tier != Some(Tier::Auto),
            "over-claimed unit {wrong} reached auto"
        );
    }
    // Retryability: RATE_LIMITED is transient; claiming `false` (auto-approvable) on the
    // lines naming it must not reach auto.
    let w = World::new();
    let o = case(
        &w,
        "enrich-error",
        "op.create_payment.error.RATE_LIMITED",
        None,
        &[
            ("src/payments/service.py", 19, 21),
            ("src/payments/service.py", 48, 50),
        ],
        json!(false),
        None,
    )?;
    ensure!(
        o.close.tier != Some(Tier::Auto),
        "over-claimed retryable false reached auto"
    );
    // A description the cited lines do not state.
    let w = World::new();
    let o = case(
        &w,
        "describe-field",
        "op.create_payment.output.body.payment_id",
        None,
        &[
            ("src/payments/service.py", 42, 54),
            ("docs/payments.md", 6, 6),
        ],
        json!("Reserved for internal use; clients should ignore it."),
        None,
    )?;
    ensure!(
        o.close.tier != Some(Tier::Auto),
        "an over-claimed description reached auto"
    );
    Ok(())
}

fn padded_comment() -> Result<(), Failed> {
    // A comment states minutes, but the code after it is unrelated: padding the comment
    // with a line of code gives it no more weight than the comment alone.
    let w = World::new();
    write_repo(
        &w,
        "src/payments/jobs.py",
        "def enqueue(queue, job):\n    # capture_timeout is in minutes\n    queue.put(job)\n",
    );
    let o = unit_case(&w, &[("src/payments/jobs.py", 2, 3)], "min")?;
    ensure!(
        o.attestation()? == AttestStatus::Attested,
        "the comment does state minutes: {:?}",
        o.research.claims
    );
    ensure!(
        o.close.tier == Some(Tier::Review) && o.reasons().contains("strength"),
        "a padded comment reached {:?}: {}",
        o.close.tier,
        o.reasons()
    );
    // The same comment documenting code that names the field counts as that code.
    let w = World::new();
    unit_free(&w);
    write_repo(
        &w,
        "src/payments/jobs.py",
        "def window(request):\n    # capture_timeout is in minutes\n    return request.capture_timeout\n",
    );
    let o = unit_case(&w, &[("src/payments/jobs.py", 2, 3)], "min")?;
    ensure!(
        o.close.tier == Some(Tier::Auto),
        "a comment documenting code naming the field is held back: {}",
        o.reasons()
    );
    Ok(())
}

/// Regression: a gate that measured a verified-only field's attesting lines with the
/// unverified ones counted would let vendor pages lift a bare comment over the bar.
fn unverified_excerpts_never_lift_a_verified_field_over_its_strength_bar() -> Result<(), Failed> {
    let w = World::new();
    unit_free(&w);
    write_repo(
        &w,
        "src/payments/jobs.py",
        "def enqueue(queue, job):\n    # capture_timeout is in minutes\n    queue.put(job)\n",
    );
    let run = anvil_bench::case::open(&w.request("annotate-unit", UNIT_TARGET))
        .map_err(failed)?
        .run_dir;
    let agent = Agent::new(anvil_bench::case::RunHandle::open(&run).map_err(failed)?);
    let mut ids = vec![
        agent
            .add_evidence("src/payments/jobs.py", Some((2, 3)))
            .map_err(failed)?,
    ];
    // Four vendor pages saying minutes: with the comment, past the bar if they counted.
    for i in 0..4 {
        let ext = crate::support::rails::add_external_evidence(
            &run,
            "vendor-docs",
            &format!("https://vendor.example/capture-{i}"),
            "capture_timeout is given in minutes\n",
            None,
        )
        .map_err(failed)?;
        ids.push(ext.id);
    }
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let claim = agent
        .add_claim("field.unit", json!("min"), &refs, 0.9)
        .map_err(failed)?;
    agent.freeze_research().map_err(failed)?;
    agent
        .propose(json!("min"), &[&claim], "trial")
        .map_err(failed)?;
    let v = agent.validate().map_err(failed)?;
    ensure!(
        v.verdict == anvil_bench::case::validate::Verdict::Pass,
        "the proposal does not validate, so the gate is not what is tested: {v:?}"
    );
    agent.finalize(None, None).map_err(failed)?;
    let close = close(&run, &CloseRequest::default(), None).map_err(failed)?;
    let check = close
        .gate
        .first()
        .ok_or_else(|| failed("close.json has no gate check"))?;
    ensure!(
        check.attestation == AttestStatus::Attested && check.lines.len() >= 5,
        "fixture: the comment and the pages should all state minutes: {check:?}"
    );
    ensure!(
        close.tier == Some(Tier::Review) && close.reasons.iter().any(|r| r.contains("strength")),
        "a comment lifted by unverified pages reached {:?}: {}",
        close.tier,
        close.reasons.join(" | ")
    );
    Ok(())
}

/// Regression: a gate that attested a value with any accepted claim asserting it, not only
/// the claims the proposal names as its grounding, would let a proposal resting on lines
/// that say nothing ride on another claim's lines.
fn only_the_proposals_own_grounding_claims_attest_its_value() -> Result<(), Failed> {
    // Two accepted claims of `min`: one on lines stating it, one on lines that do not; the
    // proposal names one of them as its grounding. Returns close.json and that claim's id.
    let grounded_on = |stating: bool| -> Result<(CloseDoc, String), Failed> {
        let w = World::new();
        unit_free(&w);
        write_repo(
            &w,
            "src/payments/jobs.py",
            "def window(request):\n    # capture_timeout is in minutes\n    return request.capture_timeout\n",
        );
        let run = anvil_bench::case::open(&w.request("annotate-unit", UNIT_TARGET))
            .map_err(failed)?
            .run_dir;
        let agent = Agent::new(anvil_bench::case::RunHandle::open(&run).map_err(failed)?);
        let says = agent
            .add_evidence("src/payments/jobs.py", Some((2, 3)))
            .map_err(failed)?;
        let silent = agent
            .add_evidence("src/payments/service.py", Some((32, 39)))
            .map_err(failed)?;
        let attested = agent
            .add_claim("field.unit", json!("min"), &[&says], 0.9)
            .map_err(failed)?;
        let bare = agent
            .add_claim("field.unit", json!("min"), &[&silent], 0.9)
            .map_err(failed)?;
        agent.freeze_research().map_err(failed)?;
        let grounding = if stating { attested } else { bare };
        agent
            .propose(json!("min"), &[&grounding], "trial")
            .map_err(failed)?;
        let v = agent.validate().map_err(failed)?;
        ensure!(
            v.verdict == anvil_bench::case::validate::Verdict::Pass,
            "the proposal does not validate, so the gate is not what is tested: {v:?}"
        );
        agent.finalize(None, None).map_err(failed)?;
        let c = close(&run, &CloseRequest::default(), None).map_err(failed)?;
        Ok((c, grounding))
    };
    let (c, bare) = grounded_on(false)?;
    ensure!(
        c.tier == Some(Tier::Review)
            && c.gate.first().map(|g| g.attestation) == Some(AttestStatus::Unattested)
            && c.gate
                .first()
                .is_some_and(|g| g.claim_ids == [bare.clone()]),
        "a proposal grounded on lines that state nothing reached {:?} on another claim's lines: {:?}",
        c.tier,
        c.gate
    );
    // The control: grounded on the claim whose lines state it, the same case reaches auto.
    let (c, _) = grounded_on(true)?;
    ensure!(
        c.tier == Some(Tier::Auto),
        "grounded on the stating claim, the value closed as {:?}: {}",
        c.tier,
        c.reasons.join(" | ")
    );
    Ok(())
}

fn explained() -> Result<(), Failed> {
    let w = World::new();
    let ok = unit_case(&w, &[("src/payments/service.py", 32, 39)], "s")?;
    let gate = ok
        .close
        .gate
        .first()
        .ok_or("close.json has no gate entry")?;
    ensure!(
        gate.passes
            && gate
                .lines
                .iter()
                .any(|l| l.rule == "time.s.api" && l.line == 36),
        "the gate does not name rule time.s.api on line 36: {gate:?}"
    );
    let on_disk = read_json(&ok.run.join("close.json"));
    ensure!(
        on_disk["gate"][0]["lines"][0]["at"]
            .as_str()
            .is_some_and(|a| a.starts_with("repo:src/payments/service.py#L")),
        "close.json does not carry the attesting line: {on_disk}"
    );
    let w = World::new();
    let bad = unit_case(&w, &[("src/payments/service.py", 32, 39)], "h")?;
    let gate = bad
        .close
        .gate
        .first()
        .ok_or("close.json has no gate entry")?;
    ensure!(
        !gate.passes && gate.lines.is_empty() && gate.note.contains("no rule for \"h\""),
        "an unattested value is not explained: {gate:?}"
    );
    Ok(())
}

fn supported_unattested() -> Result<(), Failed> {
    // The current unit `s` is proven by lines that state it …
    let w = World::new();
    open_inferred_unit(&w)?;
    let o = case(
        &w,
        "annotate-unit",
        UNIT_TARGET,
        Some("unproven_inferred_value"),
        &[
            ("src/payments/service.py", 32, 39),
            ("tests/test_capture.py", 6, 8),
        ],
        json!("s"),
        Some(Status::Supported),
    )?;
    ensure!(
        o.close.tier == Some(Tier::Auto),
        "a stated current value is not auto: {}",
        o.reasons()
    );
    // … but not by lines that name the field without stating its unit.
    let w = World::new();
    open_inferred_unit(&w)?;
    let o = case(
        &w,
        "annotate-unit",
        UNIT_TARGET,
        Some("unproven_inferred_value"),
        &[
            ("src/payments/service.py", 26, 29),
            ("tests/test_capture.py", 7, 7),
        ],
        json!("s"),
        Some(Status::Supported),
    )?;
    ensure!(
        o.close.tier == Some(Tier::Review) && o.reasons().contains("R-GATE-1"),
        "support the cited lines do not state reached {:?}: {}",
        o.close.tier,
        o.reasons()
    );
    Ok(())
}

const PAYMENT_ID: &str = "op.create_payment.output.body.payment_id";

fn description_words() -> Result<(), Failed> {
    let regions: &[(&str, u32, u32)] = &[
        ("src/payments/service.py", 42, 54),
        ("docs/payments.md", 6, 6),
    ];
    let w = World::new();
    let stated = case(
        &w,
        "describe-field",
        PAYMENT_ID,
        None,
        regions,
        json!(
            "The gateway authorisation id that POST /payments returns; GET /payments/{payment_id} returns the payment."
        ),
        None,
    )?;
    ensure!(
        stated.attestation()? == AttestStatus::Attested && stated.close.tier == Some(Tier::Auto),
        "a description made of the cited lines' words is held back: {}",
        stated.reasons()
    );
    let w = World::new();
    let unstated = case(
        &w,
        "describe-field",
        PAYMENT_ID,
        None,
        regions,
        json!("Opaque token for reconciling settlements with the acquiring bank's ledger."),
        None,
    )?;
    ensure!(
        unstated.attestation()? == AttestStatus::Unattested
            && unstated.close.tier == Some(Tier::Review)
            && unstated.reasons().contains("missing"),
        "a description the cited lines do not state reached {:?}: {}",
        unstated.close.tier,
        unstated.reasons()
    );
    // A doc comment copied verbatim, cited beside code about something else, counts only
    // as a comment (0.4 < the skill's 0.6).
    let w = World::new();
    write_repo(
        &w,
        "src/payments/ledger.py",
        "def settle(batch):\n    # Opaque token for reconciling settlements with the acquiring bank's ledger.\n    return batch.close()\n",
    );
    let copied = case(
        &w,
        "describe-field",
        PAYMENT_ID,
        None,
        &[("src/payments/ledger.py", 1, 3)],
        json!("Opaque token for reconciling settlements with the acquiring bank's ledger."),
        None,
    )?;
    ensure!(
        copied.close.tier == Some(Tier::Review),
        "a comment about other code reached auto as a description: {}",
        copied.reasons()
    );
    Ok(())
}
