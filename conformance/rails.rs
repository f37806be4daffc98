//! The rail envelope: idempotency (replay and conflict), the per-run lock under concurrency,
//! and the journal (R-RAIL-1..4).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use crate::support::rails;
use anvil_bench::case::evidence::EvidenceRequest;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{
    World, bytes_of, claim, claim_input, ev, failed, freeze, journal, out, rail_cli, read_json,
    refused_as, stderr, stdout, unit_proposal, unit_research, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        // R-RAIL-1
        Check {
            name: "rails::a_repeated_key_with_the_same_body_replays_the_saved_outcome",
            rules: &["R-RAIL-1"],
            run: replay_saved_outcome,
        },
        Check {
            name: "rails::a_replayed_freeze_returns_its_saved_record_instead_of_running_again",
            rules: &["R-RAIL-1"],
            run: replay_freeze,
        },
        Check {
            name: "rails::a_replayed_refusal_is_the_saved_refusal",
            rules: &["R-RAIL-1"],
            run: replay_refusal,
        },
        Check {
            name: "rails::the_cli_replays_a_repeated_key",
            rules: &["R-RAIL-1"],
            run: cli_replay,
        },
        Check {
            name: "rails::an_empty_or_overlong_idempotency_key_is_refused_before_the_call",
            rules: &["R-RAIL-1"],
            run: bad_keys,
        },
        // R-RAIL-2
        Check {
            name: "rails::a_repeated_key_with_a_different_body_is_a_conflict",
            rules: &["R-RAIL-2"],
            run: key_conflict,
        },
        Check {
            name: "rails::the_cli_exits_3_on_an_idempotency_conflict",
            rules: &["R-RAIL-2"],
            run: cli_conflict,
        },
        // R-RAIL-3
        Check {
            name: "rails::concurrent_add_evidence_calls_on_one_run_lose_no_update",
            rules: &["R-RAIL-3"],
            run: concurrent_evidence,
        },
        Check {
            name: "rails::concurrent_add_claim_calls_on_one_run_lose_no_update",
            rules: &["R-RAIL-3"],
            run: concurrent_claims,
        },
        Check {
            name: "rails::concurrent_cli_processes_on_one_run_serialise",
            rules: &["R-RAIL-3"],
            run: concurrent_cli,
        },
        Check {
            name: "rails::a_freeze_racing_add_evidence_never_interleaves",
            rules: &["R-RAIL-3"],
            run: freeze_races_evidence,
        },
        // R-RAIL-4
        Check {
            name: "rails::every_rail_call_is_journaled_with_key_body_hash_outcome_and_time",
            rules: &["R-RAIL-4"],
            run: journaled,
        },
        Check {
            name: "rails::an_idempotency_conflict_is_journaled_too",
            rules: &["R-RAIL-4", "R-RAIL-2"],
            run: conflict_journaled,
        },
    ]
}

fn req(path: &str, start: u32, end: u32) -> EvidenceRequest {
    EvidenceRequest {
        path: path.into(),
        start_line: Some(start),
        end_line: Some(end),
    }
}

fn replay_saved_outcome() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let first =
        rails::add_evidence(&run, &req("docs/payments.md", 3, 4), Some("ev-1")).map_err(failed)?;
    let evidence = bytes_of(&out(&run, "evidence.json"));
    // The source changes: running the call again would read other bytes. The replay must
    // return the saved artifact and write nothing.
    std::fs::write(
        w.repo().join("docs/payments.md"),
        "# Payments\n\nrewritten\nentirely\n",
    )
    .unwrap();
    // Past the journal's millisecond, so the replay's own time differs from the saved one.
    std::thread::sleep(std::time::Duration::from_millis(10));
    let again =
        rails::add_evidence(&run, &req("docs/payments.md", 3, 4), Some("ev-1")).map_err(failed)?;
    ensure!(
        again == first,
        "the replay is not the saved outcome:\n{again:?}\n{first:?}"
    );
    ensure!(
        bytes_of(&out(&run, "evidence.json")) == evidence,
        "the replay wrote evidence.json"
    );
    let j = journal(&run);
    ensure!(
        j.len() == 2 && j[1]["replayed"] == true && j[1]["idempotencyKey"] == "ev-1",
        "the replay is not journaled as one: {j:?}"
    );
    // The replay line is this call's, under this call's fence, not a copy of the first's.
    ensure!(
        j[1]["fence"].as_u64() > j[0]["fence"].as_u64(),
        "the replay line carries the saved line's fence: {j:?}"
    );
    let wrote = |line: &serde_json::Value| line["writes"].as_object().map_or(0, |w| w.len());
    ensure!(
        wrote(&j[0]) > 0 && wrote(&j[1]) == 0,
        "the replay line records the saved line's writes (it wrote nothing): {j:?}"
    );
    ensure!(
        j[1]["at"].is_string() && j[1]["at"] != j[0]["at"],
        "the replay line carries the saved line's time, not its own: {j:?}"
    );
    // Claims replay the same way.
    let c = rails::add_claim(
        &run,
        claim_input("field.unit", json!("s"), &[&first.id]),
        Some("cl-1"),
    )
    .map_err(failed)?;
    let c2 = rails::add_claim(
        &run,
        claim_input("field.unit", json!("s"), &[&first.id]),
        Some("cl-1"),
    )
    .map_err(failed)?;
    ensure!(c == c2, "claim replay differs");
    Ok(())
}

fn replay_freeze() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let record = rails::freeze_research(&u.run, Some("freeze-1")).map_err(failed)?;
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    // A fresh freeze now would be an illegal transition; the replay returns the record.
    let again = rails::freeze_research(&u.run, Some("freeze-1"))
        .map_err(|e| failed(format!("the replayed freeze ran again: {e}")))?;
    ensure!(again == record, "the replayed record differs");
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc,
        "the replay changed lifecycle.json"
    );
    refused_as(
        rails::freeze_research(&u.run, Some("freeze-2")),
        "illegal_transition",
    )?;
    Ok(())
}

fn replay_refusal() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let r = req("docs/refunds.md", 1, 1);
    let first = rails::add_evidence(&run, &r, Some("k")).expect_err("a missing file was read");
    ensure!(first.kind() == "missing_file", "setup: {first}");
    // The file appears; the same key and body still replay the saved refusal.
    std::fs::write(w.repo().join("docs/refunds.md"), "Refunds take 5 days.\n").unwrap();
    let again = rails::add_evidence(&run, &r, Some("k"));
    let e = again
        .err()
        .ok_or("the replay ran the call again and succeeded")?;
    ensure!(
        e.to_string().contains(&first.to_string()),
        "the replayed refusal `{e}` is not the saved `{first}`"
    );
    ensure!(
        !out(&run, "evidence.json").exists(),
        "the replayed refusal wrote evidence"
    );
    // A new key runs the call: the file is there now, but it was not when the case
    // opened, so the executed call refuses for that reason (R-GATE-3), not the saved one.
    let fresh = rails::add_evidence(&run, &r, Some("k2"))
        .err()
        .ok_or("a file written after open became evidence")?;
    ensure!(
        fresh.kind() == "not_at_open",
        "the new key was refused as {}: {fresh}",
        fresh.kind()
    );
    Ok(())
}

fn cli_replay() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let args = [
        "--path",
        "src/payments/service.py",
        "--start-line",
        "32",
        "--end-line",
        "39",
        "--idempotency-key",
        "agent-step-1",
    ];
    let a = rail_cli(&w, "add-evidence", &run, &args);
    let b = rail_cli(&w, "add-evidence", &run, &args);
    ensure!(
        a.status.code() == Some(0) && b.status.code() == Some(0),
        "exits {:?} {:?}: {}",
        a.status.code(),
        b.status.code(),
        stderr(&b)
    );
    ensure!(
        stdout(&a) == stdout(&b) && stdout(&a).trim().starts_with("ev-"),
        "the replay printed {} then {}",
        stdout(&a),
        stdout(&b)
    );
    ensure!(
        journal(&run)
            .iter()
            .filter(|e| e["replayed"] == true)
            .count()
            == 1,
        "the CLI replay is not journaled as a replay"
    );
    Ok(())
}

fn key_conflict() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = rails::add_evidence(&run, &req("docs/payments.md", 3, 4), Some("k")).map_err(failed)?;
    let evidence = bytes_of(&out(&run, "evidence.json"));
    let e = refused_as(
        rails::add_evidence(&run, &req("docs/payments.md", 8, 9), Some("k")),
        "idempotency_conflict",
    )?;
    ensure!(
        e.to_string().contains('k'),
        "the conflict does not name the key"
    );
    // The same key on another rail is a different body too.
    refused_as(
        rails::add_claim(
            &run,
            claim_input("field.unit", json!("s"), &[&a.id]),
            Some("k"),
        ),
        "idempotency_conflict",
    )?;
    ensure!(
        bytes_of(&out(&run, "evidence.json")) == evidence && !out(&run, "claims.json").exists(),
        "a conflicting call wrote output"
    );
    // Two rails whose requests are alike (both `{}`) are still two bodies: the rail is
    // part of what the key saved, so validate never replays freeze-research's outcome.
    let u = unit_research(&w)?;
    rails::freeze_research(&u.run, Some("f")).map_err(failed)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    refused_as(
        rails::validate(&u.run, Some("f"), false),
        "idempotency_conflict",
    )?;
    ensure!(
        rails::validate(&u.run, Some("v"), false).is_ok(),
        "validate under its own key was refused"
    );
    Ok(())
}

fn cli_conflict() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let first = rail_cli(
        &w,
        "add-evidence",
        &run,
        &["--path", "docs/payments.md", "--idempotency-key", "k"],
    );
    ensure!(first.status.code() == Some(0), "{}", stderr(&first));
    let o = rail_cli(
        &w,
        "add-evidence",
        &run,
        &[
            "--path",
            "tests/test_capture.py",
            "--idempotency-key",
            "k",
            "--json",
        ],
    );
    ensure!(
        o.status.code() == Some(3),
        "an idempotency conflict exited {:?}, not 3",
        o.status.code()
    );
    let v: Value = serde_json::from_str(&stdout(&o)).map_err(failed)?;
    ensure!(
        v["error"]["kind"] == "idempotency_conflict" && v["error"]["exitCode"] == 3,
        "--json error {v}"
    );
    // A rejection by a rail is 1, not 3: the codes are distinct.
    let r = rail_cli(&w, "add-evidence", &run, &["--path", "../air.json"]);
    ensure!(
        r.status.code() == Some(1),
        "a path refusal exited {:?}",
        r.status.code()
    );
    Ok(())
}

/// Runs `n` threads released together by a barrier; returns their results in order.
fn together<T: Send + 'static>(n: usize, f: impl Fn(usize) -> T + Send + Sync + 'static) -> Vec<T> {
    let barrier = Arc::new(Barrier::new(n));
    let f = Arc::new(f);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (barrier, f) = (Arc::clone(&barrier), Arc::clone(&f));
            std::thread::spawn(move || {
                barrier.wait();
                f(i)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn artifact_ids(run: &Path) -> Vec<String> {
    read_json(&out(run, "evidence.json"))["artifacts"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x["id"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The journal's fences are 1..=n, each once.
fn fences_distinct(run: &Path, n: usize) -> Result<(), Failed> {
    let mut fences: Vec<u64> = journal(run)
        .iter()
        .filter_map(|e| e["fence"].as_u64())
        .collect();
    fences.sort_unstable();
    ensure!(
        fences == (1..=n as u64).collect::<Vec<_>>(),
        "fences {fences:?} are not 1..={n}, each once"
    );
    Ok(())
}

fn concurrent_evidence() -> Result<(), Failed> {
    for round in 0..3 {
        let w = World::new();
        let run: PathBuf = w.open_unit()?.run_dir;
        let r = run.clone();
        let results = together(16, move |i| {
            let line = i as u32 + 1;
            rails::add_evidence(&r, &req("src/payments/service.py", line, line), None)
                .map(|a| a.id)
                .map_err(|e| e.to_string())
        });
        let mut ids = Vec::new();
        for r in results {
            ids.push(r.map_err(|e| failed(format!("round {round}: {e}")))?);
        }
        let on_disk = artifact_ids(&run);
        for id in &ids {
            ensure!(
                on_disk.contains(id),
                "round {round}: artifact {id} was lost ({} of 16 on disk)",
                on_disk.len()
            );
        }
        ensure!(
            on_disk.len() == 16,
            "round {round}: {} artifacts",
            on_disk.len()
        );
        fences_distinct(&run, 16)?;
    }
    Ok(())
}

fn concurrent_claims() -> Result<(), Failed> {
    for round in 0..3 {
        let w = World::new();
        let run = w.open_unit()?.run_dir;
        let a = ev(&run, "src/payments/service.py", 32, 39)?;
        let r = run.clone();
        let results = together(16, move |i| {
            rails::add_claim(
                &r,
                claim_input("field.conversion", json!(format!("conversion {i}")), &[&a]),
                None,
            )
            .map(|c| c.id)
            .map_err(|e| e.to_string())
        });
        let doc = read_json(&out(&run, "claims.json"));
        let on_disk: Vec<&str> = doc["claims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        for r in results {
            let id = r.map_err(|e| failed(format!("round {round}: {e}")))?;
            ensure!(
                on_disk.contains(&id.as_str()),
                "round {round}: claim {id} was lost ({} of 16 on disk)",
                on_disk.len()
            );
        }
        ensure!(
            on_disk.len() == 16,
            "round {round}: {} claims",
            on_disk.len()
        );
    }
    Ok(())
}

fn concurrent_cli() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let children: Vec<_> = (1..=12)
        .map(|line| {
            std::process::Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
                .args(["case", "add-evidence", run.to_str().unwrap()])
                .args(["--path", "src/payments/service.py"])
                .args([
                    "--start-line",
                    &line.to_string(),
                    "--end-line",
                    &line.to_string(),
                ])
                .current_dir(w.root())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ids = Vec::new();
    for c in children {
        let o = c.wait_with_output().unwrap();
        ensure!(
            o.status.success(),
            "a concurrent call failed: {}",
            stderr(&o)
        );
        ids.push(stdout(&o).trim().to_string());
    }
    let on_disk = artifact_ids(&run);
    for id in &ids {
        ensure!(
            on_disk.contains(id),
            "artifact {id} was lost ({} of 12)",
            on_disk.len()
        );
    }
    ensure!(on_disk.len() == 12, "{} artifacts on disk", on_disk.len());
    fences_distinct(&run, 12)
}

fn freeze_races_evidence() -> Result<(), Failed> {
    for round in 0..3 {
        let w = World::new();
        let run = w.open_unit()?.run_dir;
        let r = run.clone();
        let results = together(9, move |i| {
            if i == 4 {
                return rails::freeze_research(&r, None)
                    .map(|_| None)
                    .map_err(|e| e.to_string());
            }
            let line = i as u32 + 1;
            match rails::add_evidence(&r, &req("src/payments/service.py", line, line), None) {
                Ok(a) => Ok(Some(a.id)),
                Err(e) if e.kind() == "illegal_transition" => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        });
        let on_disk = artifact_ids(&run);
        for r in results {
            if let Some(id) = r.map_err(|e| failed(format!("round {round}: {e}")))? {
                ensure!(
                    on_disk.contains(&id),
                    "round {round}: accepted artifact {id} is not in evidence.json"
                );
            }
        }
        let shown = rails::show(&run).map_err(failed)?;
        ensure!(
            shown.tampered.is_none(),
            "round {round}: a write interleaved with the freeze: {:?}",
            shown.tampered
        );
        ensure!(
            shown.state == anvil_bench::case::lifecycle::State::ResearchFrozen,
            "round {round}: state {}",
            shown.state
        );
    }
    Ok(())
}

fn is_hash(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        s.strip_prefix("sha256:")
            .is_some_and(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
    })
}

fn journaled() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let mut expected: Vec<(&str, Option<&str>, &str)> = Vec::new();
    let a =
        rails::add_evidence(&run, &req("src/payments/service.py", 32, 39), None).map_err(failed)?;
    expected.push(("add-evidence", None, "ok"));
    // A rail refused by the lifecycle before its body runs is journaled like any refusal.
    let early = rails::validate(&run, Some("early"), false)
        .err()
        .ok_or("validate ran on an open run")?;
    ensure!(early.kind() == "illegal_transition", "setup: {early}");
    expected.push(("validate", Some("early"), "rejected"));
    let _ = rails::add_evidence(&run, &req("../air.json", 1, 1), Some("bad-path"));
    expected.push(("add-evidence", Some("bad-path"), "rejected"));
    let t = rails::add_evidence(&run, &req("tests/test_capture.py", 6, 8), Some("t"))
        .map_err(failed)?;
    expected.push(("add-evidence", Some("t"), "ok"));
    rails::add_evidence(&run, &req("tests/test_capture.py", 6, 8), Some("t")).map_err(failed)?;
    expected.push(("add-evidence", Some("t"), "ok"));
    let _ = rails::add_claim(
        &run,
        claim_input("field.description", json!("x"), &[&a.id]),
        None,
    );
    expected.push(("add-claim", None, "rejected"));
    let c = claim(&run, "field.unit", json!("s"), &[&a.id, &t.id])?;
    expected.push(("add-claim", None, "ok"));
    freeze(&run)?;
    expected.push(("freeze-research", None, "ok"));
    write_proposal(&run, &unit_proposal("s", &[&c]));
    rails::validate(&run, Some("v"), false).map_err(failed)?;
    expected.push(("validate", Some("v"), "ok"));
    crate::support::rails::finalize(&run, None, None, None).map_err(failed)?;
    expected.push(("finalize", None, "ok"));

    let j = journal(&run);
    ensure!(
        j.len() == expected.len(),
        "{} journal entries for {} calls: {j:#?}",
        j.len(),
        expected.len()
    );
    let mut last_at = None;
    for (i, (e, (rail, key, outcome))) in j.iter().zip(&expected).enumerate() {
        ensure!(
            e["rail"] == *rail,
            "entry {i}: rail {} not {rail}",
            e["rail"]
        );
        ensure!(
            e["idempotencyKey"].as_str() == *key,
            "entry {i}: key {} not {key:?}",
            e["idempotencyKey"]
        );
        ensure!(
            is_hash(&e["bodyHash"]),
            "entry {i}: body hash {}",
            e["bodyHash"]
        );
        ensure!(
            e["outcome"] == *outcome,
            "entry {i}: outcome {} not {outcome}",
            e["outcome"]
        );
        let at = e["at"].as_str().unwrap_or_default();
        let t = humantime::parse_rfc3339(at)
            .map_err(|_| failed(format!("entry {i}: time `{at}` is not RFC 3339")))?;
        if let Some(prev) = last_at {
            ensure!(t >= prev, "entry {i}: time goes backwards");
        }
        last_at = Some(t);
        if *outcome == "rejected" {
            ensure!(
                e["error"]["kind"].is_string() && e["error"]["message"].is_string(),
                "entry {i}: a rejection without its error"
            );
        }
    }
    ensure!(
        j[3]["bodyHash"] == j[4]["bodyHash"] && j[3]["bodyHash"] != j[0]["bodyHash"],
        "body hashes do not follow the body"
    );
    ensure!(
        j[1]["error"]["kind"] == "illegal_transition"
            && j[1]["error"]["message"] == early.to_string().as_str(),
        "the refused transition is journaled as {}",
        j[1]
    );
    Ok(())
}

fn conflict_journaled() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    rails::add_evidence(&run, &req("docs/payments.md", 3, 4), Some("k")).map_err(failed)?;
    refused_as(
        rails::add_evidence(&run, &req("docs/payments.md", 8, 9), Some("k")),
        "idempotency_conflict",
    )?;
    let j = journal(&run);
    ensure!(
        j.len() == 2,
        "the conflicting call is not in the journal ({} entries for 2 calls): {j:?}",
        j.len()
    );
    ensure!(
        j[1]["outcome"] == "rejected" && j[1]["bodyHash"] != j[0]["bodyHash"],
        "the conflicting call is journaled as {}",
        j[1]
    );
    // And the key still replays the first body's outcome.
    rails::add_evidence(&run, &req("docs/payments.md", 3, 4), Some("k")).map_err(failed)?;
    Ok(())
}

/// A key is 1 to 200 characters: an empty one or one of 201 is refused by name, before
/// the call runs or is journaled; one of 200 is a key like any other.
fn bad_keys() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let longest = "k".repeat(200);
    for bad in [String::new(), "k".repeat(201)] {
        let got = rails::add_evidence(&run, &req("docs/payments.md", 3, 4), Some(&bad));
        ensure!(
            matches!(&got, Err(e) if e.kind() == "bad_idempotency_key"),
            "a key of {} characters was taken: {got:?}",
            bad.len()
        );
    }
    ensure!(
        journal(&run).is_empty() && bytes_of(&out(&run, "evidence.json")).is_none(),
        "a refused key ran the call or journaled it: {:?}",
        journal(&run)
    );
    rails::add_evidence(&run, &req("docs/payments.md", 3, 4), Some(&longest)).map_err(failed)?;
    let j = journal(&run);
    ensure!(
        j.len() == 1 && j[0]["idempotencyKey"] == longest.as_str(),
        "a 200-character key was not taken: {j:?}"
    );
    Ok(())
}
