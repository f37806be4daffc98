//! X-TAMP: the engine-owned files of a run edited after rails ran — case.json,
//! lifecycle.json and outputs an earlier stage froze (the journal and lock: `journal`). Each attack
//! must be refused as `tamper` by the next rail through the CLI (exit 1) without that rail
//! writing anything but a journaled refusal, named by `case verify` (exit 1) down to the
//! file and field, shown as TAMPERED by `case show` (exit 1), with nothing outside the run
//! changed.

use std::path::{Path, PathBuf};

use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{edit_json, finalized, outside, rail, refused, reported, run_files, validated};
use crate::support::{
    EMAIL_TARGET, World, failed, frozen_unit, reseal, unit_proposal, unit_research, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "attacks::case_json_with_its_target_rekeyed_is_refused_by_the_next_rail",
            rules: &["X-TAMP-1"],
            run: || attempt(&CASE_REKEYED),
        },
        Check {
            name: "attacks::case_json_with_its_repository_widened_to_root_is_refused_before_any_read",
            rules: &["X-TAMP-1"],
            run: || attempt(&CASE_WIDENED),
        },
        Check {
            name: "attacks::a_lifecycle_verdict_edited_from_fail_to_pass_is_refused_by_finalize",
            rules: &["X-TAMP-2", "R-VAL-8"],
            run: || attempt(&VERDICT_EDITED),
        },
        Check {
            name: "attacks::a_resealed_verdict_from_fail_to_pass_is_refused_by_finalize_and_named_by_verify",
            rules: &["X-TAMP-6", "R-VAL-8", "R-LC-5"],
            run: || attempt(&VERDICT_RESEALED),
        },
        Check {
            name: "attacks::a_lifecycle_state_moved_back_to_revalidate_is_refused",
            rules: &["X-TAMP-2"],
            run: || attempt(&STATE_MOVED_BACK),
        },
        Check {
            name: "attacks::a_frozen_hash_edited_along_with_its_file_is_refused",
            rules: &["X-TAMP-2", "R-LC-3"],
            run: || attempt(&FROZEN_HASH_EDITED),
        },
        Check {
            name: "attacks::a_research_record_edited_in_lifecycle_is_refused",
            rules: &["X-TAMP-2"],
            run: || attempt(&RESEARCH_EDITED),
        },
        Check {
            name: "attacks::a_resealed_research_record_is_refused_by_validate_and_named_by_verify",
            rules: &["X-TAMP-6"],
            run: || attempt(&RESEARCH_RESEALED),
        },
        Check {
            name: "attacks::a_lifecycle_no_rail_wrote_that_records_another_state_is_refused",
            rules: &["X-TAMP-2"],
            run: || attempt(&GENESIS_STATE_EDITED),
        },
        Check {
            name: "attacks::a_lifecycle_no_rail_wrote_that_records_a_frozen_file_is_refused",
            rules: &["X-TAMP-2"],
            run: || attempt(&GENESIS_FROZEN_EDITED),
        },
        Check {
            name: "attacks::a_deleted_lifecycle_is_refused",
            rules: &["X-TAMP-2"],
            run: || attempt(&LIFECYCLE_DELETED),
        },
        Check {
            name: "attacks::frozen_evidence_edited_after_freeze_is_refused_by_validate",
            rules: &["X-TAMP-5", "R-EV-11", "R-LC-4"],
            run: || attempt(&EVIDENCE_EDITED),
        },
        Check {
            name: "attacks::frozen_claims_edited_after_freeze_are_refused_by_validate",
            rules: &["X-TAMP-5", "R-LC-4"],
            run: || attempt(&CLAIMS_EDITED),
        },
        Check {
            name: "attacks::a_validated_proposal_edited_is_refused_by_finalize",
            rules: &["X-TAMP-5", "R-LC-3"],
            run: || attempt(&PROPOSAL_EDITED),
        },
        Check {
            name: "attacks::a_forged_source_manifest_is_refused_by_validate_and_named_by_verify",
            rules: &["R-GATE-3", "X-TAMP-1"],
            run: || attempt(&SOURCE_FORGED_BEFORE_VALIDATE),
        },
        Check {
            name: "attacks::a_forged_source_manifest_is_refused_by_finalize_and_named_by_verify",
            rules: &["R-GATE-3", "X-TAMP-1"],
            run: || attempt(&SOURCE_FORGED_BEFORE_FINALIZE),
        },
        Check {
            name: "attacks::a_finalized_result_edited_is_refused_by_close",
            rules: &["X-TAMP-5"],
            run: || attempt(&RESULT_EDITED),
        },
    ]
}

/// One attack on the seal.
pub(super) struct Attack {
    /// Builds the run to attack; returns its directory.
    pub(super) setup: fn(&World) -> Result<PathBuf, Failed>,
    /// Edits the run as the attacker would.
    pub(super) tamper: fn(&Path),
    /// The next rail and its arguments (the run is inserted after the rail's name).
    pub(super) rail: &'static [&'static str],
    /// The file the refusal and `case verify` name, and the field `case verify` names.
    pub(super) file: &'static str,
    pub(super) field: Option<&'static str>,
    /// More the refusal must say.
    pub(super) mentions: &'static [&'static str],
}

pub(super) const ADD: &[&str] = &[
    "add-evidence",
    "--path",
    "src/payments/service.py",
    "--start-line",
    "1",
    "--end-line",
    "3",
];

pub(super) fn attempt(a: &Attack) -> Result<(), Failed> {
    let w = World::new();
    let run = super::quick(|| (a.setup)(&w))?;
    let world = outside(&w, &run);
    (a.tamper)(&run);
    let left = run_files(&run);
    let journal_left = std::fs::read(run.join("journal.jsonl")).unwrap_or_default();

    let out = rail(&w, a.rail[0], &run, &a.rail[1..]);
    let mut names = vec![a.file];
    names.extend(a.field);
    names.extend(a.mentions);
    refused(&out, "tamper", &names)?;

    // The refused rail wrote nothing but, at most, its refusal to the journal.
    let mut now = run_files(&run);
    let mut then = left;
    now.remove(Path::new("journal.jsonl"));
    then.remove(Path::new("journal.jsonl"));
    ensure!(
        now == then,
        "the refused rail changed the run: {:?}",
        super::changed(&then, &now)
    );
    let journal_now = std::fs::read(run.join("journal.jsonl")).unwrap_or_default();
    ensure!(
        journal_now.starts_with(&journal_left),
        "the refused rail rewrote the journal instead of appending"
    );
    for line in String::from_utf8_lossy(&journal_now[journal_left.len()..]).lines() {
        let v: Value = serde_json::from_str(line).map_err(failed)?;
        ensure!(
            v["outcome"] == "rejected"
                && v["writes"]
                    .as_object()
                    .is_some_and(serde_json::Map::is_empty),
            "the refused rail journaled more than its refusal: {line}"
        );
    }
    reported(&w, &run, a.file, a.field)?;
    ensure!(
        outside(&w, &run) == world,
        "the attack changed something outside the run"
    );
    Ok(())
}

// ---- setups ----

pub(super) fn research(w: &World) -> Result<PathBuf, Failed> {
    unit_research(w).map(|u| u.run)
}

fn frozen_with_proposal(w: &World) -> Result<PathBuf, Failed> {
    let u = frozen_unit(w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    Ok(u.run)
}

pub(super) fn frozen(w: &World) -> Result<PathBuf, Failed> {
    frozen_unit(w).map(|u| u.run)
}

fn failed_validation(w: &World) -> Result<PathBuf, Failed> {
    let u = validated(w, "ms")?;
    let v = &crate::support::lifecycle_json(&u.run)["records"]["proposalValidation"]["verdict"];
    ensure!(
        v == "fail",
        "fixture: the `ms` proposal does not fail ({v})"
    );
    Ok(u.run)
}

fn passed(w: &World) -> Result<PathBuf, Failed> {
    validated(w, "s").map(|u| u.run)
}

// ---- edits ----

fn lifecycle(run: &Path, edit: impl FnOnce(&mut Value)) {
    edit_json(&run.join("lifecycle.json"), edit);
}

fn strengthen_research(run: &Path) {
    lifecycle(run, |lc| {
        let values = lc["records"]["research"]["values"].as_array_mut().unwrap();
        values[0]["strength"] = json!(1.0);
    });
}

const CASE_REKEYED: Attack = Attack {
    setup: research,
    tamper: |run| {
        edit_json(&run.join("case.json"), |c| {
            c["target"]["key"] = json!(EMAIL_TARGET);
        });
    },
    rail: ADD,
    file: "case.json",
    field: None,
    mentions: &[],
};

const CASE_WIDENED: Attack = Attack {
    setup: research,
    tamper: |run| {
        edit_json(&run.join("case.json"), |c| {
            c["inputs"]["repository"] = json!("/");
        });
    },
    rail: &["add-evidence", "--path", "etc/passwd"],
    file: "case.json",
    field: None,
    mentions: &[],
};

const VERDICT_EDITED: Attack = Attack {
    setup: failed_validation,
    tamper: |run| {
        lifecycle(run, |lc| {
            lc["records"]["proposalValidation"]["verdict"] = json!("pass");
        });
    },
    rail: &["finalize"],
    file: "lifecycle.json",
    field: None,
    mentions: &[],
};

const VERDICT_RESEALED: Attack = Attack {
    setup: failed_validation,
    tamper: |run| {
        lifecycle(run, |lc| {
            lc["records"]["proposalValidation"]["verdict"] = json!("pass");
        });
        reseal(run);
    },
    rail: &["finalize"],
    file: "lifecycle.json",
    field: Some("records.proposalValidation"),
    mentions: &[],
};

/// Only the state changed, in a lifecycle.json no journal line wrote (open's genesis
/// record): its journal head, transitions and records are still the genesis ones.
const GENESIS_STATE_EDITED: Attack = Attack {
    setup: research,
    tamper: |run| lifecycle(run, |lc| lc["state"] = json!("research_frozen")),
    rail: ADD,
    file: "lifecycle.json",
    field: None,
    mentions: &["no journal line wrote it"],
};

/// Only a frozen file added, in the genesis lifecycle.json: its state, journal head and
/// transitions are still open's, and no journal line wrote it.
const GENESIS_FROZEN_EDITED: Attack = Attack {
    setup: research,
    tamper: |run| {
        let hash = anvil_bench::canon::bytes_hash(
            &std::fs::read(crate::support::out(run, "evidence.json")).unwrap(),
        );
        lifecycle(run, |lc| lc["frozen"]["output/evidence.json"] = json!(hash));
    },
    rail: ADD,
    file: "lifecycle.json",
    field: None,
    mentions: &["no journal line wrote it"],
};

const STATE_MOVED_BACK: Attack = Attack {
    setup: failed_validation,
    tamper: |run| {
        lifecycle(run, |lc| {
            lc["state"] = json!("research_frozen");
            lc["transitions"].as_array_mut().unwrap().pop();
        });
        // A second attempt at validation, with a proposal that would pass.
        let claim = crate::support::read_json(&crate::support::out(run, "claims.json"))["claims"]
            [0]["id"]
            .as_str()
            .unwrap()
            .to_string();
        write_proposal(run, &unit_proposal("s", &[&claim]));
    },
    rail: &["validate"],
    file: "lifecycle.json",
    field: None,
    mentions: &[],
};

const FROZEN_HASH_EDITED: Attack = Attack {
    setup: frozen_with_proposal,
    tamper: |run| {
        let path = crate::support::out(run, "evidence.json");
        edit_json(&path, |ev| {
            ev["artifacts"][0]["excerpt"] = json!("capture_timeout is in minutes\n");
        });
        let hash = anvil_bench::canon::bytes_hash(&std::fs::read(&path).unwrap());
        lifecycle(run, |lc| lc["frozen"]["output/evidence.json"] = json!(hash));
    },
    rail: &["validate"],
    file: "lifecycle.json",
    field: None,
    mentions: &[],
};

const RESEARCH_EDITED: Attack = Attack {
    setup: frozen_with_proposal,
    tamper: strengthen_research,
    rail: &["validate"],
    file: "lifecycle.json",
    field: None,
    mentions: &[],
};

const RESEARCH_RESEALED: Attack = Attack {
    setup: frozen_with_proposal,
    tamper: |run| {
        strengthen_research(run);
        reseal(run);
    },
    rail: &["validate"],
    file: "lifecycle.json",
    field: Some("records.research"),
    mentions: &[],
};

const LIFECYCLE_DELETED: Attack = Attack {
    setup: research,
    tamper: |run| std::fs::remove_file(run.join("lifecycle.json")).unwrap(),
    rail: ADD,
    file: "lifecycle.json",
    field: None,
    mentions: &[],
};

const EVIDENCE_EDITED: Attack = Attack {
    setup: frozen_with_proposal,
    tamper: |run| {
        edit_json(&crate::support::out(run, "evidence.json"), |ev| {
            ev["artifacts"][0]["excerpt"] = json!("capture_timeout is in minutes\n");
        });
    },
    rail: &["validate"],
    file: "output/evidence.json",
    field: None,
    mentions: &[],
};

const CLAIMS_EDITED: Attack = Attack {
    setup: frozen_with_proposal,
    tamper: |run| {
        edit_json(&crate::support::out(run, "claims.json"), |c| {
            c["claims"][0]["confidence"] = json!(1.0);
        });
    },
    rail: &["validate"],
    file: "output/claims.json",
    field: None,
    mentions: &[],
};

const PROPOSAL_EDITED: Attack = Attack {
    setup: passed,
    tamper: |run| {
        edit_json(&crate::support::out(run, "proposal.json"), |p| {
            p["patch"]["set"]["unit"] = json!("ms");
        });
    },
    rail: &["finalize"],
    file: "output/proposal.json",
    field: None,
    mentions: &[],
};

const RESULT_EDITED: Attack = Attack {
    setup: finalized_run,
    tamper: |run| {
        edit_json(&crate::support::out(run, "result.json"), |r| {
            r["patch"]["unit"] = json!("ms");
        });
    },
    rail: &["close"],
    file: "output/result.json",
    field: None,
    mentions: &[],
};

fn finalized_run(w: &World) -> Result<PathBuf, Failed> {
    finalized(w).map(|u| u.run)
}

/// One recorded file hash in source.json changed: the manifest no longer hashes to the
/// `sourceDigest` case.json records, whichever rail comes next and whether or not it
/// reads evidence.
fn forge_source(run: &Path) {
    edit_json(&run.join("source.json"), |m| {
        let files = m["files"].as_object_mut().unwrap();
        let first = files.keys().next().unwrap().clone();
        files[&first] = json!(format!("sha256:{}", "0".repeat(64)));
    });
}

const SOURCE_FORGED_BEFORE_VALIDATE: Attack = Attack {
    setup: frozen_with_proposal,
    tamper: forge_source,
    rail: &["validate"],
    file: "source.json",
    field: Some("."),
    mentions: &["sourceDigest"],
};

const SOURCE_FORGED_BEFORE_FINALIZE: Attack = Attack {
    setup: passed,
    tamper: forge_source,
    rail: &["finalize"],
    file: "source.json",
    field: Some("."),
    mentions: &["sourceDigest"],
};
