//! Operator-given outputs (X-OUT-1..4): `case close --apply`, the `--out` of `air`, `report`
//! and `battery`, and `replay-model --transcript` go only onto a new path or over a regular
//! file (a directory for `battery --out`). A device, a symlink, a FIFO or a directory there
//! is refused by name, before anything is written, and left as it was.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anvil_bench::driver::scripted::{Agent, ScriptedAgentDriver};
use libtest_mimic::Failed;
use serde_json::json;

use super::probe::{cli, device, mkfifo, refused, run, snapshot, still_device};
use crate::support::{World, bytes_of, failed};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "hostile::close_apply_onto_a_device_is_refused_and_the_node_is_kept",
            rules: &["X-OUT-1", "R-REC-8"],
            run: apply_device,
        },
        Check {
            name: "hostile::close_apply_onto_a_symlink_a_fifo_or_a_directory_is_refused",
            rules: &["X-OUT-2", "R-REC-8"],
            run: apply_special,
        },
        Check {
            name: "hostile::air_report_and_battery_outputs_onto_a_link_fifo_or_device_are_refused",
            rules: &["X-OUT-3"],
            run: out_flags,
        },
        Check {
            name: "hostile::a_replay_transcript_onto_a_symlink_or_fifo_is_refused",
            rules: &["X-OUT-4"],
            run: transcript,
        },
    ]
}

/// A finalized unit run whose close is `auto` (so `--apply` would write).
fn auto_run(w: &World) -> Result<PathBuf, Failed> {
    let opened = anvil_bench::case::open(&w.request("annotate-unit", crate::support::UNIT_TARGET))
        .map_err(failed)?;
    ScriptedAgentDriver::new("trial", |agent: &Agent| {
        let ev = agent.add_evidence("src/payments/service.py", Some((32, 39)))?;
        let claim = agent.add_claim("field.unit", json!("s"), &[&ev], 0.9)?;
        agent.freeze_research()?;
        agent.propose(json!("s"), &[&claim], "trial")?;
        agent.validate()?;
        agent.finalize(None, None)?;
        Ok(())
    })
    .run(
        &anvil_bench::case::RunHandle::open(&opened.run_dir)
            .map_err(|e| Failed::from(e.to_string()))?,
    )
    .map_err(failed)?;
    Ok(opened.run_dir)
}

fn close_apply(w: &World, run_dir: &Path, out: &Path) -> Result<std::process::Output, Failed> {
    cli(
        w.root(),
        &[
            "case",
            "close",
            run_dir.to_str().unwrap(),
            "--apply",
            out.to_str().unwrap(),
        ],
    )
}

fn apply_device() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = auto_run(&w)?;
    let dev = device(w.root());
    let rdev = std::fs::symlink_metadata(&dev).map_err(failed)?.rdev();
    let before = snapshot(w.root());
    let out = close_apply(&w, &run_dir, &dev)?;
    let err = refused(&out, &[dev.to_str().unwrap(), "it is a device"])?;
    ensure!(
        !err.contains("applied"),
        "a refused apply says applied: {err}"
    );
    still_device(&dev, rdev)?;
    ensure!(
        snapshot(w.root()) == before,
        "a refused apply changed the world"
    );
    // The same run closes and applies onto a new path: the destination was the refusal.
    let ok = close_apply(&w, &run_dir, &w.root().join("patched.json"))?;
    ensure!(ok.status.success(), "the control apply failed: {ok:?}");
    Ok(())
}

fn apply_special() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = auto_run(&w)?;
    let target = w.root().join("precious.json");
    std::fs::write(&target, "{}\n").unwrap();
    let link = w.root().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = mkfifo(&w.root().join("fifo.json"));
    let dir = w.root().join("dir.json");
    std::fs::create_dir(&dir).unwrap();
    let before = snapshot(w.root());
    for (path, what) in [
        (&link, "it is a symlink"),
        (&fifo, "it is a FIFO"),
        (&dir, "it is a directory"),
    ] {
        let out = close_apply(&w, &run_dir, path)?;
        refused(&out, &[path.to_str().unwrap(), what])?;
    }
    ensure!(
        snapshot(w.root()) == before,
        "a refused apply changed the world"
    );
    ensure!(
        bytes_of(&target).as_deref() == Some(b"{}\n".as_slice()),
        "the link's target was written"
    );
    Ok(())
}

fn out_flags() -> Result<(), Failed> {
    let w = World::new();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = manifest.join("tests/fixtures/openapi/widgets-3.0.json");
    let results = manifest.join("reports/example");
    let target = w.root().join("precious");
    std::fs::create_dir(&target).unwrap();
    let link = w.root().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = mkfifo(&w.root().join("fifo"));
    let dev = device(w.root());
    let rdev = std::fs::symlink_metadata(&dev).map_err(failed)?.rdev();
    let before = snapshot(w.root());
    for out in [&link, &fifo, &dev] {
        let out = out.to_str().unwrap();
        let import = cli(
            w.root(),
            &["air", "import", spec.to_str().unwrap(), "--out", out],
        )?;
        refused(&import, &[out, "refusing to write"]).map_err(|e| prefix("air import", e))?;
        let report = cli(
            w.root(),
            &["report", "show", results.to_str().unwrap(), "--out", out],
        )?;
        refused(&report, &[out, "refusing to write"]).map_err(|e| prefix("report show", e))?;
        let merge = cli(
            w.root(),
            &["battery", "merge", results.to_str().unwrap(), "--out", out],
        )?;
        refused(&merge, &[out, "refusing to write"]).map_err(|e| prefix("battery merge", e))?;
    }
    still_device(&dev, rdev)?;
    ensure!(
        snapshot(w.root()) == before,
        "a refused output changed the world"
    );
    Ok(())
}

fn prefix(what: &str, e: Failed) -> Failed {
    format!("{what}: {}", crate::support::msg(&e)).into()
}

fn transcript() -> Result<(), Failed> {
    let w = World::new();
    let target = w.root().join("precious.jsonl");
    std::fs::write(&target, "").unwrap();
    let link = w.root().join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = mkfifo(&w.root().join("fifo.jsonl"));
    let before = snapshot(w.root());
    for out in [&link, &fifo] {
        let out = out.to_str().unwrap();
        let args = ["replay-model", "--transcript", out, "--exit-on-stdin-eof"];
        let served = run(w.root(), &args, &[], Stdio::null())?;
        refused(&served, &[out, "refusing to write"])?;
    }
    ensure!(
        snapshot(w.root()) == before,
        "a refused transcript changed the world"
    );
    Ok(())
}
