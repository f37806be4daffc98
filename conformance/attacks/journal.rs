//! X-TAMP on the chain itself: the journal wiped, deleted, cut short, with a line edited,
//! inserted or moved; the lock's anchor deleted or edited; and an idempotency key reused
//! after a wipe. The shape of each trial is [`super::seal`]'s.

use std::path::{Path, PathBuf};

use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::seal::{ADD, Attack, attempt, frozen, research};
use super::{outside, rail, refused, reported, run_files, verify};
use crate::support::{World, add_ev, failed, unit_proposal, write_proposal};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "attacks::a_wiped_journal_is_refused",
            rules: &["X-TAMP-3"],
            run: || attempt(&JOURNAL_WIPED),
        },
        Check {
            name: "attacks::a_deleted_journal_is_refused",
            rules: &["X-TAMP-3"],
            run: || attempt(&JOURNAL_DELETED),
        },
        Check {
            name: "attacks::a_journal_cut_short_by_one_line_is_refused",
            rules: &["X-TAMP-3"],
            run: || attempt(&JOURNAL_TRUNCATED),
        },
        Check {
            name: "attacks::a_journal_line_edited_in_the_middle_is_refused_naming_the_next_link",
            rules: &["X-TAMP-3"],
            run: || attempt(&JOURNAL_LINE_EDITED),
        },
        Check {
            name: "attacks::the_last_journal_line_edited_is_refused_against_the_lock_anchor",
            rules: &["X-TAMP-3", "X-TAMP-4"],
            run: || attempt(&JOURNAL_LAST_EDITED),
        },
        Check {
            name: "attacks::a_journal_line_inserted_is_refused",
            rules: &["X-TAMP-3"],
            run: || attempt(&JOURNAL_LINE_INSERTED),
        },
        Check {
            name: "attacks::journal_lines_reordered_are_refused",
            rules: &["X-TAMP-3"],
            run: || attempt(&JOURNAL_REORDERED),
        },
        Check {
            name: "attacks::a_wiped_journal_never_lets_a_reused_idempotency_key_run_a_new_body",
            rules: &["X-TAMP-7", "X-TAMP-3", "R-RAIL-2"],
            run: key_after_wipe,
        },
        Check {
            name: "attacks::a_wiped_journal_and_lock_after_a_freeze_are_refused_naming_lifecycle",
            rules: &["X-TAMP-7", "X-TAMP-2"],
            run: key_after_full_wipe,
        },
        Check {
            name: "attacks::a_deleted_lock_is_refused_naming_it",
            rules: &["X-TAMP-4"],
            run: || attempt(&LOCK_DELETED),
        },
        Check {
            name: "attacks::a_deleted_lock_after_a_single_rail_is_not_silently_rebuilt",
            rules: &["X-TAMP-4"],
            run: || attempt(&LOCK_DELETED_AFTER_ONE),
        },
        Check {
            name: "attacks::a_committed_last_line_cut_short_is_refused_and_kept_by_rails_verify_and_show",
            rules: &["X-TAMP-3", "X-TAMP-4"],
            run: committed_line_cut,
        },
        Check {
            name: "attacks::a_rail_refused_for_a_deleted_lock_creates_nothing",
            rules: &["X-TAMP-4"],
            run: lock_not_recreated,
        },
        Check {
            name: "attacks::a_rail_refused_for_a_corrupt_first_journal_line_creates_nothing",
            rules: &["X-TAMP-3", "X-TAMP-4"],
            run: corrupt_first_line,
        },
        Check {
            name: "attacks::a_lifecycle_run_id_edited_before_the_first_rail_is_refused",
            rules: &["X-TAMP-2"],
            run: || {
                genesis_edited(
                    |lc| lc["runId"] = json!("01ARZ3NDEKTSV4RRFFQ69G5FAV"),
                    "runId",
                )
            },
        },
        Check {
            name: "attacks::a_lifecycle_open_transition_backdated_before_the_first_rail_is_refused",
            rules: &["X-TAMP-2"],
            run: || {
                genesis_edited(
                    |lc| lc["transitions"][0]["at"] = json!("2001-01-01T00:00:00Z"),
                    "transitions",
                )
            },
        },
        Check {
            name: "attacks::a_lock_anchor_edited_is_refused",
            rules: &["X-TAMP-4"],
            run: || attempt(&LOCK_ANCHOR_EDITED),
        },
        Check {
            name: "attacks::a_lock_anchor_moved_one_line_back_is_refused_never_rolled_forward",
            rules: &["X-TAMP-4"],
            run: || attempt(&LOCK_ANCHOR_ONE_BACK),
        },
    ]
}

fn one_rail(w: &World) -> Result<PathBuf, Failed> {
    let run = w.open_unit()?.run_dir;
    add_ev(&run, "src/payments/service.py", Some((32, 39))).map_err(failed)?;
    Ok(run)
}

/// Line `i` (0-based) with its `at` moved by a year: still a well-formed entry.
fn edit_line(run: &Path, i: usize) {
    let mut all = lines(run);
    let mut v: Value = serde_json::from_str(&all[i]).unwrap();
    let at = v["at"].as_str().unwrap().replacen("20", "19", 1);
    v["at"] = json!(at);
    all[i] = serde_json::to_string(&v).unwrap();
    write_lines(run, &all);
}

fn write_lines(run: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    if !lines.is_empty() {
        text.push('\n');
    }
    std::fs::write(run.join("journal.jsonl"), text).unwrap();
}

fn lines(run: &Path) -> Vec<String> {
    std::fs::read_to_string(run.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

const JOURNAL_WIPED: Attack = Attack {
    setup: research,
    tamper: |run| std::fs::write(run.join("journal.jsonl"), "").unwrap(),
    rail: ADD,
    file: "journal.jsonl",
    field: None,
    mentions: &["lock"],
};

const JOURNAL_DELETED: Attack = Attack {
    setup: research,
    tamper: |run| std::fs::remove_file(run.join("journal.jsonl")).unwrap(),
    rail: ADD,
    file: "journal.jsonl",
    field: None,
    mentions: &[],
};

const JOURNAL_TRUNCATED: Attack = Attack {
    setup: research,
    tamper: |run| {
        let mut all = lines(run);
        all.pop();
        write_lines(run, &all);
    },
    rail: ADD,
    file: "journal.jsonl",
    field: None,
    mentions: &[],
};

const JOURNAL_LINE_EDITED: Attack = Attack {
    setup: research,
    tamper: |run| edit_line(run, 0),
    rail: ADD,
    file: "journal.jsonl",
    field: Some("line 2.prev"),
    mentions: &[],
};

const JOURNAL_LAST_EDITED: Attack = Attack {
    setup: research,
    tamper: |run| {
        let n = lines(run).len();
        edit_line(run, n - 1);
    },
    rail: ADD,
    file: "journal.jsonl",
    field: Some("."),
    mentions: &["lock"],
};

const JOURNAL_LINE_INSERTED: Attack = Attack {
    setup: research,
    tamper: |run| {
        let mut all = lines(run);
        all.insert(1, all[0].clone());
        write_lines(run, &all);
    },
    rail: ADD,
    file: "journal.jsonl",
    field: Some("line 2.prev"),
    mentions: &[],
};

const JOURNAL_REORDERED: Attack = Attack {
    setup: research,
    tamper: |run| {
        let mut all = lines(run);
        all.swap(1, 2);
        write_lines(run, &all);
    },
    rail: ADD,
    file: "journal.jsonl",
    field: Some("line 2.prev"),
    mentions: &[],
};

const LOCK_DELETED: Attack = Attack {
    setup: research,
    tamper: |run| std::fs::remove_file(run.join(".lock")).unwrap(),
    rail: ADD,
    file: ".lock",
    field: None,
    mentions: &[],
};

const LOCK_DELETED_AFTER_ONE: Attack = Attack {
    setup: one_rail,
    tamper: |run| std::fs::remove_file(run.join(".lock")).unwrap(),
    rail: ADD,
    file: ".lock",
    field: None,
    mentions: &[],
};

const LOCK_ANCHOR_EDITED: Attack = Attack {
    setup: research,
    tamper: |run| rewrite_lock(run, |lock| lock[2] = forged_head()),
    rail: ADD,
    file: "journal.jsonl",
    field: None,
    mentions: &["lock"],
};

/// The anchor forged one line behind the journal, as a crash between commit and anchor
/// would leave it, but with a head that is not the last line's `prev`: the roll-forward a
/// crash earns must not take it, so it stays for the integrity check to refuse.
const LOCK_ANCHOR_ONE_BACK: Attack = Attack {
    setup: research,
    tamper: |run| {
        rewrite_lock(run, |lock| {
            let entries: u64 = lock[1].parse().unwrap();
            lock[1] = (entries - 1).to_string();
            lock[2] = forged_head();
        });
    },
    rail: ADD,
    file: "journal.jsonl",
    field: None,
    mentions: &["lock"],
};

/// Rewrites the run's `.lock` (its lines: fence, anchored entries, anchored head) by `edit`.
fn rewrite_lock(run: &Path, edit: impl FnOnce(&mut Vec<String>)) {
    let lock = std::fs::read_to_string(run.join(".lock")).unwrap();
    let mut lines: Vec<String> = lock.lines().map(str::to_string).collect();
    edit(&mut lines);
    std::fs::write(run.join(".lock"), format!("{}\n", lines.join("\n"))).unwrap();
}

/// A journal head no journal hashes to.
fn forged_head() -> String {
    format!("sha256:{}", "0".repeat(64))
}

/// The agent used key `k1` for one body; the journal is wiped; the same key with another
/// body (and with the same body) must not run.
fn key_after_wipe() -> Result<(), Failed> {
    let w = World::new();
    let run = super::quick(|| w.open_unit())?.run_dir;
    let req = |path: &str| anvil_bench::case::evidence::EvidenceRequest {
        path: path.into(),
        start_line: Some(32),
        end_line: Some(39),
    };
    super::quick(|| {
        crate::support::rails::add_evidence(&run, &req("src/payments/service.py"), Some("k1"))?;
        add_ev(&run, "tests/test_capture.py", Some((6, 8)))
    })
    .map_err(failed)?;
    let world = outside(&w, &run);
    std::fs::write(run.join("journal.jsonl"), "").unwrap();
    let left = run_files(&run);
    for path in ["docs/payments.md", "src/payments/service.py"] {
        let out = rail(
            &w,
            "add-evidence",
            &run,
            &[
                "--path",
                path,
                "--start-line",
                "1",
                "--end-line",
                "3",
                "--idempotency-key",
                "k1",
            ],
        );
        refused(&out, "tamper", &["journal.jsonl"]).map_err(|e| {
            failed(format!(
                "key k1 reused for {path}: {}",
                crate::support::msg(&e)
            ))
        })?;
        ensure!(
            run_files(&run) == left,
            "a refused reuse of k1 changed the run"
        );
    }
    reported(&w, &run, "journal.jsonl", None)?;
    ensure!(outside(&w, &run) == world, "the attack changed the world");
    Ok(())
}

/// Journal and lock both gone after freeze-research: lifecycle.json still records the
/// journal it was written after, so the run is refused naming it.
fn key_after_full_wipe() -> Result<(), Failed> {
    let w = World::new();
    let run = super::quick(|| frozen(&w))?;
    let world = outside(&w, &run);
    std::fs::write(run.join("journal.jsonl"), "").unwrap();
    std::fs::remove_file(run.join(".lock")).unwrap();
    write_proposal(&run, &unit_proposal("s", &["cl-0"]));
    let left = run_files(&run);
    let out = rail(&w, "validate", &run, &["--idempotency-key", "k1"]);
    refused(&out, "tamper", &["lifecycle.json"])?;
    ensure!(run_files(&run) == left, "the refused rail changed the run");
    let (code, doc) = verify(&w, &run);
    ensure!(code == Some(1), "verify passed a wiped run: {doc}");
    reported(&w, &run, "lifecycle.json", None)?;
    ensure!(outside(&w, &run) == world, "the attack changed the world");
    Ok(())
}

/// Every byte of the run, the lock included: what a refused call and `case verify` must
/// leave as they found it.
fn whole_run(run: &Path) -> std::collections::BTreeMap<PathBuf, String> {
    super::snapshot(run)
}

/// `rail` (through the CLI) is refused as `kind` naming each of `names`, then `case verify`
/// and `case show` report `file` (`field`): none of the three changes a byte of the run.
fn refused_untouched(
    w: &World,
    run: &Path,
    rail_args: &[&str],
    kind: &str,
    names: &[&str],
    file: &str,
    field: Option<&str>,
) -> Result<(), Failed> {
    let world = outside(w, run);
    let kept = whole_run(run);
    let out = rail(w, rail_args[0], run, &rail_args[1..]);
    refused(&out, kind, names)?;
    let now = whole_run(run);
    ensure!(
        now == kept,
        "the refused `{}` changed the run: {:?}",
        rail_args[0],
        super::changed(&kept, &now)
    );
    reported(w, run, file, field)?;
    let now = whole_run(run);
    ensure!(
        now == kept,
        "`case verify` or `case show` changed the run: {:?}",
        super::changed(&kept, &now)
    );
    ensure!(outside(w, run) == world, "the attack changed the world");
    Ok(())
}

/// 20 bytes cut off the journal's end: the last line, which the lock's anchor counts, has
/// lost its newline and reads like an append a crash cut short. It committed, so it is
/// tampering, and what is left of it is evidence: no rail, `case verify` or `case show`
/// may cut it off as torn.
fn committed_line_cut() -> Result<(), Failed> {
    let w = World::new();
    let run = super::quick(|| research(&w))?;
    let path = run.join("journal.jsonl");
    let bytes = std::fs::read(&path)?;
    std::fs::write(&path, &bytes[..bytes.len() - 20])?;
    refused_untouched(
        &w,
        &run,
        ADD,
        "tamper",
        &["journal.jsonl", "lock"],
        "journal.jsonl",
        Some("."),
    )
}

/// The lock deleted after rails ran: the refusal creates no new, empty lock.
fn lock_not_recreated() -> Result<(), Failed> {
    let w = World::new();
    let run = super::quick(|| research(&w))?;
    std::fs::remove_file(run.join(".lock"))?;
    refused_untouched(&w, &run, ADD, "tamper", &[".lock"], ".lock", None)?;
    ensure!(!run.join(".lock").exists(), "a lock was created");
    Ok(())
}

/// Before any rail (no lock yet), a first journal line that is not an entry: the rail is
/// refused and creates no lock.
fn corrupt_first_line() -> Result<(), Failed> {
    let w = World::new();
    let run = super::quick(|| w.open_unit())?.run_dir;
    ensure!(!run.join(".lock").exists(), "fixture: open made a lock");
    std::fs::write(run.join("journal.jsonl"), "{\"not\": \"an entry\"}\n")?;
    let kept = whole_run(&run);
    let out = rail(&w, ADD[0], &run, &ADD[1..]);
    ensure!(
        out.status.code() == Some(1),
        "the rail was not refused: {}",
        crate::support::stdout(&out)
    );
    let now = whole_run(&run);
    ensure!(
        now == kept,
        "the refused rail changed the run: {:?}",
        super::changed(&kept, &now)
    );
    Ok(())
}

/// lifecycle.json as open wrote it, edited before any rail: no journal line or anchor
/// guards it yet, so it must be what open wrote from case.json (its run id, its one open
/// transition), or the first rail would seal the edit in.
fn genesis_edited(edit: fn(&mut Value), field: &str) -> Result<(), Failed> {
    let w = World::new();
    let run = super::quick(|| w.open_unit())?.run_dir;
    super::edit_json(&run.join("lifecycle.json"), edit);
    refused_untouched(
        &w,
        &run,
        &["freeze-research"],
        "tamper",
        &["lifecycle.json", field],
        "lifecycle.json",
        Some(field),
    )?;
    ensure!(!run.join(".lock").exists(), "a lock was created");
    Ok(())
}
