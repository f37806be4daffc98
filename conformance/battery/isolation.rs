//! What a trial can reach: the labels are refused when reachable (R-BAT-1) and read only
//! once the case has ended (R-BAT-2); every arm starts from the same committed repository
//! (R-BAT-6) at a path, with a brief and an environment, that names nothing of the corpus
//! (R-BAT-7).

use std::collections::BTreeSet;

use crate::support::rails::finalize;
use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::runner::BatteryError;
use anvil_bench::battery::vault::Closed;
use anvil_bench::case::RunHandle;
use anvil_bench::case::finalize::Status;
use libtest_mimic::Failed;

use super::{CONFLICTED, Fixture, PROPOSAL, battery, battery_ok, outcome};
use crate::support::{World, failed, read_json};
use crate::{Check, ensure};

fn canonical(p: &std::path::Path) -> String {
    std::fs::canonicalize(p).unwrap().display().to_string()
}

/// The battery refused its input, before any trial, with a message holding every `needle`.
fn refused<T>(r: Result<T, BatteryError>, needles: &[&str]) -> Result<(), Failed> {
    match r {
        Err(BatteryError::Input(msg)) => {
            for n in needles {
                ensure!(msg.contains(n), "the refusal does not name `{n}`: {msg}");
            }
            Ok(())
        }
        other => Err(format!("expected the input to be refused, got {}", outcome(&other)).into()),
    }
}

fn labels_inside_the_corpus_are_refused_naming_both() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    // A hidden directory: the corpus loader skips it, so only the reachability check
    // stands between a trial's repository copy and the answer key.
    let inside = f.scenarios().join(".labels");
    std::fs::rename(f.labels(), &inside).unwrap();
    let mut cfg = f.config("out", Arm::Heuristic);
    cfg.labels.clone_from(&inside);
    refused(
        battery(&cfg),
        &[&canonical(&inside), &canonical(&f.scenarios()), "inside"],
    )?;
    ensure!(!f.out("out").exists(), "a refused battery created --out");
    Ok(())
}

/// Regression: a check that looked only for the labels inside the corpus would let a
/// corpus inside the labels through, where a trial's copy sits beside the answer key.
fn a_corpus_inside_the_labels_is_refused_naming_both() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    // A hidden directory, so the label loader has nothing to say about it.
    let inside = f.labels().join(".corpus");
    std::fs::rename(f.scenarios(), &inside).unwrap();
    let mut cfg = f.config("out", Arm::Heuristic);
    cfg.scenarios.clone_from(&inside);
    refused(
        battery(&cfg),
        &[&canonical(&inside), &canonical(&f.labels()), "inside"],
    )?;
    ensure!(!f.out("out").exists(), "a refused battery created --out");
    Ok(())
}

fn a_results_directory_overlapping_the_labels_is_refused() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    // --out inside the labels, not created yet.
    let mut cfg = f.config("out", Arm::Heuristic);
    cfg.out = f.labels().join("results");
    refused(battery(&cfg), &[&canonical(&f.labels()), "overlap"])?;
    ensure!(
        !cfg.out.exists(),
        "a refused battery created its results inside the labels"
    );
    // The labels inside --out.
    let out = f.out("results");
    std::fs::create_dir_all(&out).unwrap();
    let labels = out.join("labels");
    std::fs::rename(f.labels(), &labels).unwrap();
    let mut cfg = f.config("results", Arm::Heuristic);
    cfg.labels.clone_from(&labels);
    refused(
        battery(&cfg),
        &[&canonical(&labels), &canonical(&out), "overlap"],
    )
}

/// Regression: only the labels were kept apart from --out, so results (every label's
/// expected values and canary) could be written into a scenario's repository, and the
/// next battery's trials would copy them.
fn a_results_directory_inside_the_corpus_is_refused() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut cfg = f.config("out", Arm::Heuristic);
    cfg.out = f.scenarios().join(PROPOSAL).join("repo/results");
    refused(battery(&cfg), &[&canonical(&f.scenarios()), "overlap"])?;
    ensure!(
        !cfg.out.exists(),
        "a refused battery created its results inside the corpus"
    );
    Ok(())
}

/// Regression: the battery parsed labels and scenarios for structure only, so what
/// `scenarios check` refuses ran: a scenario filed in another class was scored there, and
/// a canary that is not one (empty, or a word the repository holds) failed the cheater
/// control without naming the label. Each is refused before any trial, naming the file.
fn what_scenarios_check_refuses_the_battery_refuses_naming_it() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let scenario = f.scenarios().join(PROPOSAL).join("scenario.json");
    let mut doc = read_json(&scenario);
    doc["class"] = serde_json::json!("conflicting");
    crate::support::write_json(&scenario, &doc);
    refused(
        battery(&f.config("out", Arm::Heuristic)),
        &[&scenario.display().to_string(), "class"],
    )?;
    ensure!(!f.out("out").exists(), "a refused battery created --out");
    let f = Fixture::new(&[PROPOSAL]);
    f.edit_label(PROPOSAL, |l| l["canary"] = serde_json::json!(""));
    refused(
        battery(&f.config("out", Arm::Heuristic)),
        &[&f.label(PROPOSAL).display().to_string(), "canary"],
    )?;
    ensure!(!f.out("out").exists(), "a refused battery created --out");
    Ok(())
}

fn a_scenario_repository_holding_a_symlink_is_refused_naming_it() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let link = f.scenarios().join(PROPOSAL).join("repo/docs/answers");
    std::os::unix::fs::symlink(f.labels(), &link).unwrap();
    refused(
        battery(&f.config("out", Arm::Heuristic)),
        &[&link.display().to_string(), "symlink", PROPOSAL],
    )
}

/// A scenario's own `.git` would configure the git that commits its copy: here a
/// `core.hooksPath` whose post-commit hook runs on the host, outside every sandbox, where
/// it could read the labels from the battery's arguments. The scenario is refused by name
/// and the hook never runs.
fn a_scenario_repository_holding_its_own_git_directory_is_refused_and_runs_nothing()
-> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let repo = f.scenarios().join(PROPOSAL).join("repo");
    let hooks = f.root().join("hooks");
    let ran = f.root().join("hook-ran");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        repo.join(".git/config"),
        format!("[core]\n\thooksPath = {}\n", hooks.display()),
    )
    .unwrap();
    let hook = hooks.join("post-commit");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    refused(
        battery(&f.config("out", Arm::Heuristic)),
        &[&repo.join(".git").display().to_string(), "`.git`", PROPOSAL],
    )?;
    ensure!(!ran.exists(), "the scenario's hook ran on the host");
    Ok(())
}

fn a_label_is_read_only_after_its_case_ends() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    // The agent takes its own label away while it investigates: a battery that read the
    // label before the case ended would not notice.
    let moved = f.root().join("moved.json");
    let mut cfg = f.command_config(
        "out",
        &format!("mv '{}' '{}'", f.label(PROPOSAL).display(), moved.display()),
    );
    cfg.jobs = 1;
    match battery(&cfg) {
        Err(BatteryError::Fatal(msg)) => {
            ensure!(
                msg.contains(PROPOSAL) && msg.contains("changed"),
                "the failure does not name the scenario whose label changed: {msg}"
            );
        }
        other => {
            return Err(format!("expected the battery to fail, got {}", outcome(&other)).into());
        }
    }
    ensure!(moved.is_file(), "the agent never ran");
    Ok(())
}

fn a_label_proof_is_refused_while_the_case_is_open() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    match Closed::check(&RunHandle::open(&run).map_err(failed)?) {
        Ok(_) => return Err("an open run yielded the proof that unlocks its label".into()),
        Err(e) => ensure!(
            e.to_string().contains("open"),
            "the refusal does not say why: {e}"
        ),
    }
    finalize(
        &run,
        Some(Status::InsufficientEvidence),
        Some("nothing found"),
        None,
    )
    .map_err(failed)?;
    Closed::check(&RunHandle::open(&run).map_err(failed)?)
        .map_err(|e| failed(format!("a finalized run was refused: {e}")))?;
    Ok(())
}

/// Regression: a proof check that refused only `open` would hand out the label while the
/// agent still works, between freezes.
fn a_label_proof_is_refused_at_every_stage_before_finalize() -> Result<(), Failed> {
    let w = World::new();
    let u = crate::support::unit_research(&w)?;
    let refused_at = |stage: &str| -> Result<(), Failed> {
        match Closed::check(&RunHandle::open(&u.run).map_err(failed)?) {
            Ok(_) => {
                Err(format!("a run at {stage} yielded the proof that unlocks its label").into())
            }
            Err(e) => {
                ensure!(
                    e.to_string().contains(stage),
                    "the refusal does not name {stage}: {e}"
                );
                Ok(())
            }
        }
    };
    refused_at("open")?;
    crate::support::freeze(&u.run)?;
    refused_at("research_frozen")?;
    crate::support::write_proposal(
        &u.run,
        &crate::support::unit_proposal("s", &[u.claim.as_str()]),
    );
    crate::support::rails::validate(&u.run, None, false).map_err(failed)?;
    refused_at("proposal_frozen")?;
    finalize(&u.run, None, None, None).map_err(failed)?;
    Closed::check(&RunHandle::open(&u.run).map_err(failed)?)
        .map_err(|e| failed(format!("a finalized run was refused: {e}")))?;
    Ok(())
}

fn every_arm_starts_from_the_same_committed_repository() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let script = r#"repo=$(sed -n 's/.*"repository": *"\([^"]*\)".*/\1/p' case.json | head -n 1)
git -C "$repo" rev-parse HEAD > workspace/head.txt
git -C "$repo" status --porcelain > workspace/status.txt"#;
    let mut cfg = f.command_config("out", script);
    cfg.controls = true;
    let doc = battery_ok(&cfg)?.results;
    // The same scenario, prepared again the way the battery prepares it.
    let scenario = f.scenarios().join(PROPOSAL);
    let again = anvil_bench::battery::workspace::prepare(
        &scenario.join("repo"),
        &scenario.join("air.json"),
        &f.root().join("again"),
        true,
    )
    .map_err(failed)?;
    ensure!(
        doc.trials.len() == cfg.arms().len(),
        "expected {} arms, got {}",
        cfg.arms().len(),
        doc.trials.len()
    );
    let mut revisions = BTreeSet::new();
    for t in &doc.trials {
        ensure!(
            t.start_digest == again.digest,
            "{}: started from {}, the scenario prepared again is {}",
            t.id,
            t.start_digest,
            again.digest
        );
        let run = doc_run(&f, t)?;
        revisions.insert(
            read_json(&run.join("case.json"))["identity"]["sourceRevision"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
    }
    ensure!(
        revisions.len() == 1,
        "the arms' cases name different source revisions: {revisions:?}"
    );
    let command = super::trial(&doc, PROPOSAL, Arm::Command)?;
    let ws = doc_run(&f, command)?.join("workspace");
    let head = std::fs::read_to_string(ws.join("head.txt")).unwrap_or_default();
    ensure!(
        revisions.contains(head.trim()),
        "the agent saw HEAD `{}`, the cases name {revisions:?}",
        head.trim()
    );
    let status = std::fs::read_to_string(ws.join("status.txt")).unwrap_or_default();
    ensure!(
        status.trim().is_empty(),
        "the agent's copy is not clean: {status}"
    );
    Ok(())
}

fn doc_run(
    f: &Fixture,
    t: &anvil_bench::battery::results::TrialRecord,
) -> Result<std::path::PathBuf, Failed> {
    let rel = t
        .run
        .as_ref()
        .ok_or_else(|| failed(format!("{} kept no run", t.id)))?;
    Ok(f.out("out").join(rel))
}

fn nothing_the_agent_sees_names_the_scenario_the_class_or_the_corpus() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    let script = r#"pwd > workspace/cwd.txt
env > workspace/env.txt
cp /proc/$$/cmdline workspace/argv.txt
cp "$ANVIL_CASE_MD" workspace/brief.txt
cp case.json workspace/case.txt
ls -laR "$(dirname "$PWD")" > workspace/around.txt"#;
    let doc = battery_ok(&f.command_config("out", script))?.results;
    let root = canonical(f.root());
    let mut forbidden: Vec<String> = vec![
        root.clone(),
        f.root().display().to_string(),
        "labels".into(),
        "scenarios".into(),
    ];
    for id in [PROPOSAL, CONFLICTED] {
        let (class, name) = id.split_once('/').unwrap();
        forbidden.extend([id.to_string(), class.to_string(), name.to_string()]);
    }
    for id in [PROPOSAL, CONFLICTED] {
        let t = super::trial(&doc, id, Arm::Command)?;
        let ws = doc_run(&f, t)?.join("workspace");
        for dump in [
            "cwd.txt",
            "env.txt",
            "argv.txt",
            "brief.txt",
            "case.txt",
            "around.txt",
        ] {
            let text = std::fs::read_to_string(ws.join(dump))
                .map_err(|e| failed(format!("{id}: the agent left no {dump}: {e}")))?;
            ensure!(!text.trim().is_empty(), "{id}: {dump} is empty");
            for word in &forbidden {
                ensure!(
                    !text.contains(word.as_str()),
                    "{id}: the agent's {dump} names `{word}`:\n{text}"
                );
            }
        }
        let argv = std::fs::read_to_string(ws.join("argv.txt")).unwrap();
        let argv: Vec<&str> = argv.trim_end_matches('\0').split('\0').collect();
        ensure!(
            argv.len() == 3 && argv[0].ends_with("sh") && argv[1] == "-c" && argv[2] == script,
            "{id}: the battery changed the agent's command line: {argv:?}"
        );
    }
    Ok(())
}

/// Regression: the trial's own directory was neutral, but a name one level up (the
/// scenario templates every trial is copied from, the other trials' worlds) would tell the
/// agent the scenario or the class all the same.
fn the_directories_around_a_trial_name_nothing_of_the_corpus() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    let script = r#"repo=$(sed -n 's/.*"repository": *"\([^"]*\)".*/\1/p' case.json | head -n 1)
root=$(dirname "$(dirname "$repo")")
{ echo "$root"; ls -la "$root"; for d in "$root"/*/; do ls -la "$d"; done; } > workspace/around.txt"#;
    let doc = battery_ok(&f.command_config("out", script))?.results;
    let mut forbidden: Vec<String> = vec![
        canonical(f.root()),
        f.root().display().to_string(),
        "labels".into(),
        "scenarios".into(),
    ];
    for id in [PROPOSAL, CONFLICTED] {
        let (class, name) = id.split_once('/').unwrap();
        forbidden.extend([id.to_string(), class.to_string(), name.to_string()]);
    }
    for id in [PROPOSAL, CONFLICTED] {
        let t = super::trial(&doc, id, Arm::Command)?;
        let text = std::fs::read_to_string(doc_run(&f, t)?.join("workspace/around.txt"))
            .map_err(|e| failed(format!("{id}: the agent left no listing: {e}")))?;
        ensure!(
            text.lines().count() > 6,
            "{id}: the listing around the trial is empty:\n{text}"
        );
        for word in &forbidden {
            ensure!(
                !text.contains(word.as_str()),
                "{id}: the directories around the trial name `{word}`:\n{text}"
            );
        }
    }
    Ok(())
}

/// Regression: trials opened on the shared scenario template (or on one copy reused) would
/// see what an earlier trial's agent left in its repository.
fn every_trial_gets_a_fresh_copy_of_the_repository() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let script = r#"repo=$(sed -n 's/.*"repository": *"\([^"]*\)".*/\1/p' case.json | head -n 1)
printf '%s' "$repo" > workspace/repo.txt
if [ -e "$repo/LEFT-BY-AN-EARLIER-TRIAL" ]; then echo seen > workspace/seen.txt; fi
echo x > "$repo/LEFT-BY-AN-EARLIER-TRIAL""#;
    let mut cfg = f.command_config("out", script);
    cfg.repeats = 3;
    cfg.jobs = 1;
    let doc = battery_ok(&cfg)?.results;
    let mut repos = BTreeSet::new();
    let mut ran = 0;
    for t in doc.trials.iter().filter(|t| t.arm == Arm::Command) {
        ran += 1;
        let ws = doc_run(&f, t)?.join("workspace");
        ensure!(
            !ws.join("seen.txt").exists(),
            "{}: its repository holds a file an earlier trial's agent wrote",
            t.id
        );
        let repo = std::fs::read_to_string(ws.join("repo.txt"))
            .map_err(|e| failed(format!("{}: the agent left no repo.txt: {e}", t.id)))?;
        ensure!(
            repos.insert(repo.clone()),
            "{}: opened on `{repo}`, a repository another trial used",
            t.id
        );
    }
    ensure!(ran == 3, "expected 3 command trials, got {ran}");
    Ok(())
}

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "battery::labels_inside_the_corpus_are_refused_naming_both",
            rules: &["R-BAT-1"],
            run: labels_inside_the_corpus_are_refused_naming_both,
        },
        Check {
            name: "battery::a_corpus_inside_the_labels_is_refused_naming_both",
            rules: &["R-BAT-1"],
            run: a_corpus_inside_the_labels_is_refused_naming_both,
        },
        Check {
            name: "battery::a_results_directory_overlapping_the_labels_is_refused",
            rules: &["R-BAT-1"],
            run: a_results_directory_overlapping_the_labels_is_refused,
        },
        Check {
            name: "battery::a_results_directory_inside_the_corpus_is_refused",
            rules: &["R-BAT-1", "R-BAT-3"],
            run: a_results_directory_inside_the_corpus_is_refused,
        },
        Check {
            name: "battery::what_scenarios_check_refuses_the_battery_refuses_naming_it",
            rules: &["R-BAT-3", "R-BAT-8", "X-CORPUS-1"],
            run: what_scenarios_check_refuses_the_battery_refuses_naming_it,
        },
        Check {
            name: "battery::a_scenario_repository_holding_a_symlink_is_refused_naming_it",
            rules: &["R-BAT-1", "R-BAT-7"],
            run: a_scenario_repository_holding_a_symlink_is_refused_naming_it,
        },
        Check {
            name: "battery::a_scenario_repository_holding_its_own_git_directory_is_refused_and_runs_nothing",
            rules: &["R-BAT-1", "R-BAT-7", "X-CORPUS-10"],
            run: a_scenario_repository_holding_its_own_git_directory_is_refused_and_runs_nothing,
        },
        Check {
            name: "battery::a_label_is_read_only_after_its_case_ends",
            rules: &["R-BAT-2"],
            run: a_label_is_read_only_after_its_case_ends,
        },
        Check {
            name: "battery::a_label_proof_is_refused_at_every_stage_before_finalize",
            rules: &["R-BAT-2"],
            run: a_label_proof_is_refused_at_every_stage_before_finalize,
        },
        Check {
            name: "battery::a_label_proof_is_refused_while_the_case_is_open",
            rules: &["R-BAT-2"],
            run: a_label_proof_is_refused_while_the_case_is_open,
        },
        Check {
            name: "battery::every_arm_starts_from_the_same_committed_repository",
            rules: &["R-BAT-6"],
            run: every_arm_starts_from_the_same_committed_repository,
        },
        Check {
            name: "battery::the_directories_around_a_trial_name_nothing_of_the_corpus",
            rules: &["R-BAT-7"],
            run: the_directories_around_a_trial_name_nothing_of_the_corpus,
        },
        Check {
            name: "battery::every_trial_gets_a_fresh_copy_of_the_repository",
            rules: &["R-BAT-7"],
            run: every_trial_gets_a_fresh_copy_of_the_repository,
        },
        Check {
            name: "battery::nothing_the_agent_sees_names_the_scenario_the_class_or_the_corpus",
            rules: &["R-BAT-7"],
            run: nothing_the_agent_sees_names_the_scenario_the_class_or_the_corpus,
        },
    ]
}
