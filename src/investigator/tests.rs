//! The investigation through the in-process adapter, and the baseline, on small
//! repositories built here: every outcome the engine allows, and an honest decline.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Conclusion, baseline, heuristic};
use crate::case::finalize::Status;
use crate::case::{OpenRequest, open};

/// A temp world: an AIR with one operation holding `field`, a repository of `files`, and a
/// run of `skill` on the field opened on them.
struct World {
    _dir: tempfile::TempDir,
    run: PathBuf,
}

impl World {
    /// The run, opened as the CLI opens it for the investigator.
    fn handle(&self) -> crate::case::RunHandle {
        crate::case::RunHandle::open(&self.run).unwrap()
    }
}

fn world(skill: &str, field: Value, files: &[(&str, &str)]) -> World {
    world_in(skill, field, files, "Place an order.")
}

/// [`world`] with the operation described as `op_description`.
fn world_in(skill: &str, field: Value, files: &[(&str, &str)], op_description: &str) -> World {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    for (path, text) in files {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::create_dir_all(&repo).unwrap();
    let name = field["name"].as_str().unwrap().to_string();
    let air = json!({
        "airVersion": 1,
        "service": {"id": "shop", "version": "1"},
        "operations": [{
            "id": "place_order", "method": "POST", "path": "/orders",
            "description": op_description,
            "fields": [field], "errors": []
        }],
        "capabilities": []
    });
    std::fs::write(dir.path().join("air.json"), air.to_string()).unwrap();
    let opened = open(&OpenRequest::new(
        dir.path().join("air.json"),
        repo,
        skill,
        &format!("op.place_order.input.body.{name}"),
        dir.path().join("cases"),
        "test",
    ))
    .unwrap();
    World {
        run: opened.run_dir,
        _dir: dir,
    }
}

/// A numeric body field with the given unit and inferred attributes.
fn quantity(name: &str, unit: Value, inferred: &[&str]) -> Value {
    json!({"location": "input.body", "name": name, "type": "integer", "required": false,
           "description": "How long the shop waits for the warehouse to confirm.",
           "unit": unit, "sensitivity": null, "inferred": inferred})
}

fn result_of(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("output/result.json")).unwrap()).unwrap()
}

fn proposal_of(run: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(run.join("output/proposal.json")).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

/// Code that states seconds next to `wait_timeout`.
const SECONDS: &str = "import time\n\n\ndef wait(request):\n    # The wait_timeout is whole seconds.\n    time.sleep(request.wait_timeout)\n";

#[test]
fn a_unit_the_code_states_is_proposed() {
    let w = world(
        "annotate-unit",
        quantity("wait_timeout", Value::Null, &[]),
        &[("src/orders.py", SECONDS)],
    );
    let c = heuristic::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::ProposalGenerated, "{c:?}");
    assert_eq!(proposal_of(&w.run).unwrap()["patch"]["set"]["unit"], "s");
    // Searches, reads, evidence, claim, freeze, write, validate, finalize.
    assert!(c.actions >= 8, "{c:?}");
}

#[test]
fn sources_that_disagree_end_conflicted_with_a_claim_for_each_value() {
    let test =
        "def test_wait_timeout():\n    request = Request(wait_timeout=1500)  # 1500 milliseconds\n";
    let w = world(
        "annotate-unit",
        quantity("wait_timeout", Value::Null, &[]),
        &[("src/orders.py", SECONDS), ("tests/test_orders.py", test)],
    );
    let c = heuristic::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::Conflicted, "{c:?}");
    let result = result_of(&w.run);
    let values: Vec<&Value> = result["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["value"])
        .collect();
    assert_eq!(values, [&json!("s"), &json!("ms")], "{result:#}");
    assert_eq!(
        result["conflicts"].as_array().unwrap().len(),
        1,
        "{result:#}"
    );
    assert!(proposal_of(&w.run).is_none());
    let reason = c.reason.unwrap();
    assert!(reason.contains("\"s\" and \"ms\""), "{reason}");
}

#[test]
fn an_inferred_value_the_sources_state_ends_supported_without_a_proposal() {
    let w = world(
        "annotate-unit",
        quantity("wait_timeout", json!("s"), &["unit"]),
        &[("src/orders.py", SECONDS)],
    );
    let c = heuristic::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::Supported, "{c:?}");
    let result = result_of(&w.run);
    assert_eq!(result["supported"]["value"], "s", "{result:#}");
    assert!(proposal_of(&w.run).is_none());
}

#[test]
fn support_below_the_bar_is_declined_with_the_refusal_as_the_reason() {
    let doc = "# Orders\n\nThe `wait_timeout` is given in seconds.\n";
    let w = world(
        "annotate-unit",
        quantity("wait_timeout", json!("s"), &["unit"]),
        &[("docs/orders.md", doc)],
    );
    let c = heuristic::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::InsufficientEvidence, "{c:?}");
    let reason = c.reason.unwrap();
    assert!(reason.contains("could not finalize supported"), "{reason}");
    assert!(reason.contains("0.6 < 0.8"), "{reason}");
}

#[test]
fn an_inferred_value_the_sources_contradict_is_replaced_by_a_proposal() {
    let w = world(
        "annotate-unit",
        quantity("wait_timeout", json!("ms"), &["unit"]),
        &[("src/orders.py", SECONDS)],
    );
    let c = heuristic::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::ProposalGenerated, "{c:?}");
    assert_eq!(proposal_of(&w.run).unwrap()["patch"]["set"]["unit"], "s");
}

#[test]
fn documentation_is_read_even_where_code_mentions_the_field_more_often() {
    // Regression: at most three regions were read, strongest kind first, so prose in docs
    // never voted whenever code mentioned the field.
    let mut files: Vec<(String, String)> = (0..7)
        .map(|i| {
            (
                format!("src/step{i}.py"),
                format!("def step{i}(order):\n    return lookup(order.gift_note)\n"),
            )
        })
        .collect();
    files.push((
        "docs/orders.md".into(),
        "# Orders\n\nThe `gift_note` is printed on the packing slip for the recipient.\n".into(),
    ));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let field = json!({"location": "input.body", "name": "gift_note", "type": "string",
        "required": false, "description": null, "unit": null, "sensitivity": null});
    let w = world("describe-field", field, &files);
    let c = heuristic::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::ProposalGenerated, "{c:?}");
    assert_eq!(
        proposal_of(&w.run).unwrap()["patch"]["set"]["description"],
        "The gift_note is printed on the packing slip for the recipient."
    );
    let result = result_of(&w.run);
    assert_eq!(
        result["artifacts"][0]["path"], "docs/orders.md",
        "{result:#}"
    );
}

#[test]
fn nothing_found_is_declined_honestly_and_the_run_is_finalized() {
    let w = world(
        "annotate-unit",
        quantity("wait_timeout", Value::Null, &[]),
        &[("src/other.py", "def unrelated():\n    return 1\n")],
    );
    let c = heuristic::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::InsufficientEvidence, "{c:?}");
    let reason = c.reason.unwrap();
    assert!(reason.contains("mentions `wait_timeout`"), "{reason}");
    let result = result_of(&w.run);
    assert!(
        result["claims"].as_array().unwrap().is_empty(),
        "{result:#}"
    );
    assert_eq!(result["reason"], reason.as_str());
}

#[test]
fn a_binary_file_in_scope_does_not_stop_the_search() {
    // The router refuses a whole-repository search that meets a binary file; the adapter
    // searches the other files instead.
    let w = world(
        "annotate-unit",
        quantity("wait_timeout", Value::Null, &[]),
        &[
            ("src/orders.py", SECONDS),
            ("docs/logo.md", "\u{0}\u{1}binary"),
        ],
    );
    let c = heuristic::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::ProposalGenerated, "{c:?}");
    let journal = std::fs::read_to_string(w.run.join("journal.jsonl")).unwrap();
    assert!(journal.contains("binary_file"), "{journal}");
}

#[test]
fn a_second_run_on_a_finalized_case_is_an_error_not_a_conclusion() {
    let w = world(
        "annotate-unit",
        quantity("wait_timeout", Value::Null, &[]),
        &[("src/orders.py", SECONDS)],
    );
    heuristic::run(&w.handle()).unwrap();
    assert!(heuristic::run(&w.handle()).is_err());
}

#[test]
fn the_baseline_proposes_a_unit_a_name_suffix_spells_and_the_engine_judges_it() {
    let w = world(
        "annotate-unit",
        quantity("timeout_ms", Value::Null, &[]),
        &[("src/orders.py", "x = 1\n")],
    );
    let c = baseline::run(&w.handle()).unwrap();
    let proposal = proposal_of(&w.run).expect("a proposal");
    assert_eq!(proposal["patch"]["set"]["unit"], "ms");
    // The AIR is external, unverified evidence: the unit contract needs verified grounding.
    assert_eq!(c.status, Status::InsufficientEvidence, "{c:?}");
    let reason = c.reason.clone().unwrap();
    assert!(reason.contains("validation rejected"), "{reason}");
    let result = result_of(&w.run);
    assert_eq!(result["artifacts"][0]["kind"], "external", "{result:#}");
    assert_eq!(result["artifacts"][0]["source"], "air", "{result:#}");
    // No repository access: the router was never asked.
    let journal = std::fs::read_to_string(w.run.join("journal.jsonl")).unwrap();
    assert!(!journal.contains("\"rail\":\"query\""), "{journal}");
    // Deterministic: the same case gets the same outcome.
    let again = world(
        "annotate-unit",
        quantity("timeout_ms", Value::Null, &[]),
        &[("src/orders.py", "x = 1\n")],
    );
    let twin: Conclusion = baseline::run(&again.handle()).unwrap();
    assert_eq!(twin, c);
}

#[test]
fn the_baseline_declines_a_name_that_spells_no_unit() {
    let w = world(
        "annotate-unit",
        quantity("timeout", Value::Null, &[]),
        &[("src/orders.py", "x = 1\n")],
    );
    let c = baseline::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::InsufficientEvidence, "{c:?}");
    assert!(c.reason.unwrap().contains("no word of the name `timeout`"));
    assert!(proposal_of(&w.run).is_none());
    let result = result_of(&w.run);
    assert!(result["artifacts"].as_array().unwrap().is_empty());
}

#[test]
fn the_baseline_describes_a_field_only_from_the_operations_own_words() {
    let field = json!({"location": "input.body", "name": "gift_note", "type": "string",
        "required": false, "description": null, "unit": null, "sensitivity": null});
    let w = world("describe-field", field.clone(), &[]);
    let c = baseline::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::InsufficientEvidence, "{c:?}");
    assert!(c.reason.unwrap().contains("does not mention `gift_note`"));
    assert!(proposal_of(&w.run).is_none());

    let said = "Place an order. The gift_note is printed on the packing slip.";
    let w = world_in("describe-field", field, &[], said);
    baseline::run(&w.handle()).unwrap();
    assert_eq!(
        proposal_of(&w.run).unwrap()["patch"]["set"]["description"],
        "The gift_note is printed on the packing slip."
    );
}

#[test]
fn the_baseline_never_cites_the_air_where_the_skill_admits_no_external_evidence() {
    let field = json!({"location": "input.body", "name": "recipient_email", "type": "string",
        "required": false, "description": "Where the confirmation goes.", "unit": null,
        "sensitivity": null});
    let w = world("classify-sensitivity", field, &[]);
    let c = baseline::run(&w.handle()).unwrap();
    assert_eq!(c.status, Status::InsufficientEvidence, "{c:?}");
    assert!(c.reason.unwrap().contains("cannot be cited"));
}
