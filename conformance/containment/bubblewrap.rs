//! Bubblewrap enforcement of the filesystem split and the labels (R-CON-6, R-CON-7), and
//! rails relayed from inside the sandbox.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anvil_bench::case::RunHandle;
use anvil_bench::process::{Outcome, ProcessSpec, Stream};
use anvil_bench::sandbox::{Backend, SandboxPlan};
use libtest_mimic::Failed;

use super::{Project, SECRET, SH_PATH, bwrap_ready, contained, lines};
use crate::ensure;
use crate::support::World;

pub(super) fn bwrap_writes() -> Result<(), Failed> {
    if !bwrap_ready()? {
        return Ok(());
    }
    let p = Project::new();
    let before = crate::support::tree(&p.run);
    let script = r#"
        echo tampered > "$REPO/src/lib.py" && echo "WROTE repository file"
        mkdir "$REPO/new" && echo "WROTE repository dir"
        echo tampered > "$RUN/case.json" && echo "WROTE case.json"
        rm -f "$RUN/CASE.md" && echo "REMOVED CASE.md"
        echo x > "$RUN/lifecycle.json" && echo "WROTE lifecycle.json"
        echo x > "$RUN/extra" && echo "WROTE run root"
        echo ok > "$RUN/workspace/notes.txt" && echo "WROTE workspace"
        echo ok > "$RUN/output/proposal.json" && echo "WROTE output"
        echo ok > /tmp/scratch && echo "WROTE tmp"
        true"#;
    let ran = contained(Backend::Bubblewrap, &p.spec("sh", script), &p.plan())?;
    ensure!(
        ran.record.outcome == Outcome::Completed,
        "the sandboxed shell failed: {:?}",
        ran.record.failure_message()
    );
    let out = lines(&ran, Stream::Stdout);
    ensure!(
        out == ["WROTE workspace", "WROTE output", "WROTE tmp"],
        "writes that succeeded inside the sandbox: {out:?}\nstderr: {:?}",
        lines(&ran, Stream::Stderr)
    );
    ensure!(
        lines(&ran, Stream::Stderr)
            .iter()
            .any(|l| l.contains("Read-only file system")),
        "the refused writes were not refused as read-only: {:?}",
        lines(&ran, Stream::Stderr)
    );
    ensure!(
        ran.violation.is_none(),
        "repository changed: {:?}",
        ran.violation
    );
    let mut after = crate::support::tree(&p.run);
    for written in ["workspace/notes.txt", "output/proposal.json"] {
        ensure!(
            after.remove(Path::new(written)).is_some(),
            "`{written}` was not written"
        );
    }
    ensure!(
        after == before,
        "the run root changed: {before:?} -> {after:?}"
    );
    Ok(())
}

pub(super) fn bwrap_rails() -> Result<(), Failed> {
    if !bwrap_ready()? {
        return Ok(());
    }
    let w = World::new();
    let run = std::fs::canonicalize(w.open_unit()?.run_dir)?;
    let labels = w.root().join("labels-private");
    std::fs::create_dir_all(&labels)?;
    let handle = RunHandle::open(&run).map_err(|e| Failed::from(e.to_string()))?;
    let plan = SandboxPlan::for_run(
        &handle,
        Path::new(env!("CARGO_BIN_EXE_anvil-bench")),
        vec![labels],
    );
    // A query whose request comes on stdin (`--request -`): stdin must cross the relay.
    let run_id = run.file_name().unwrap().to_string_lossy().into_owned();
    let request = serde_json::json!({"format": "anvil-investigation-request", "formatVersion": 1,
        "runId": run_id,
        "requests": [{"requestId": "a", "operation": "source.find_text",
            "arguments": {"text": "capture", "caseSensitive": true, "offset": 0, "limit": 5}}]});
    let script = format!(
        r#"anvil-bench case add-evidence . --path src/payments/service.py --start-line 32 --end-line 39 && echo "RAIL OK"
        printf '%s' '{}' | anvil-bench case query . --request - && echo "QUERY OK"
        echo junk >> journal.jsonl && echo "WROTE journal"
        anvil-bench case open --air '{}' --repo '{}' --skill annotate-unit --target x && echo "OPENED"
        true"#,
        request,
        w.air().display(),
        w.repo().display()
    );
    let spec = ProcessSpec {
        program: "sh".into(),
        args: vec!["-c".into(), script],
        cwd: run.clone(),
        env: BTreeMap::from([("PATH".to_string(), SH_PATH.to_string())]),
        timeout: Duration::from_mins(1),
        install_hint: None,
        log_path: None,
    };
    let journal_before = std::fs::read_to_string(run.join("journal.jsonl")).unwrap_or_default();
    let ran = contained(Backend::Bubblewrap, &spec, &plan)?;
    let (out, err) = (lines(&ran, Stream::Stdout), lines(&ran, Stream::Stderr));
    ensure!(
        out.iter().any(|l| l.starts_with("ev-")) && out.iter().any(|l| l == "RAIL OK"),
        "the relayed rail did not succeed: stdout {out:?} stderr {err:?}"
    );
    ensure!(
        out.iter().any(|l| l == "QUERY OK"),
        "a relayed query with its request on stdin failed: stdout {out:?} stderr {err:?}"
    );
    ensure!(
        !out.iter().any(|l| l == "WROTE journal"),
        "the agent wrote journal.jsonl itself: the run root is writable inside"
    );
    ensure!(
        err.iter()
            .any(|l| l.contains("not available inside the sandbox")),
        "`case open` from inside was not refused: {err:?}"
    );
    let evidence = crate::support::read_json(&run.join("output/evidence.json"));
    ensure!(
        evidence["artifacts"]
            .as_array()
            .is_some_and(|a| a.len() == 1),
        "the rail did not record the artifact: {evidence}"
    );
    let journal = std::fs::read_to_string(run.join("journal.jsonl"))?;
    ensure!(
        journal.starts_with(&journal_before) && !journal.contains("junk"),
        "the agent wrote the journal itself"
    );
    ensure!(
        crate::support::journal(&run)
            .iter()
            .any(|e| e["rail"] == "add-evidence"),
        "the relayed rail is not in the journal"
    );
    Ok(())
}

pub(super) fn bwrap_labels() -> Result<(), Failed> {
    if !bwrap_ready()? {
        return Ok(());
    }
    let p = Project::new();
    let script = r#"
        cat "$LABELS/answer.json" && echo "READ labels"
        ls "$LABELS" && echo "LISTED labels"
        ls -a "$PROJECT"
        true"#;
    let ran = contained(Backend::Bubblewrap, &p.spec("sh", script), &p.plan())?;
    let out = lines(&ran, Stream::Stdout);
    let all: Vec<&str> = ran.record.lines.iter().map(|l| l.text.as_str()).collect();
    ensure!(
        !all.iter()
            .any(|l| l.contains(SECRET) || l.contains("READ") || l.contains("LISTED")),
        "the labels were reachable: {all:?}"
    );
    ensure!(
        !out.iter().any(|l| l.contains("labels-private")) && out.iter().any(|l| l == "repo"),
        "the project directory inside the sandbox shows {out:?}"
    );
    // A plan whose mounts would contain the labels is refused before anything runs.
    let mut plan = p.plan();
    plan.extra_ro.push(p.root.clone());
    match contained(Backend::Bubblewrap, &p.spec("sh", "true"), &plan) {
        Ok(_) => return Err("a plan mounting the labels' parent ran".into()),
        Err(e) => ensure!(
            msg(&e).contains("hidden_path_exposed"),
            "unexpected refusal: {}",
            msg(&e)
        ),
    }
    Ok(())
}

/// The other half of the hidden-path check: a mount *inside* the labels directory (a
/// subdirectory as an extra read-only path, a label file as a rail input, a repository kept
/// there) exposes what it mounts, so the plan is refused before anything runs.
pub(super) fn bwrap_mount_inside_labels() -> Result<(), Failed> {
    if !bwrap_ready()? {
        return Ok(());
    }
    let p = Project::new();
    let inner = p.labels.join("by-class");
    std::fs::create_dir_all(inner.join("repo/src"))?;
    std::fs::write(inner.join("repo/src/lib.py"), "TIMEOUT = 30\n")?;
    let marker = p.run.join("workspace/ran");
    let spec = p.spec("sh", &format!("touch '{}'", marker.display()));
    type Edit = fn(&mut SandboxPlan, &Path);
    let plans: [(&str, Edit); 3] = [
        (
            "a directory inside the labels as an extra read-only path",
            |plan, inner| plan.extra_ro.push(inner.to_path_buf()),
        ),
        ("a label file as a rail input", |plan, inner| {
            plan.rail_inputs
                .push(inner.parent().unwrap().join("answer.json"));
        }),
        ("a repository inside the labels directory", |plan, inner| {
            plan.repo = inner.join("repo");
        }),
    ];
    for (what, edit) in plans {
        let mut plan = p.plan();
        edit(&mut plan, &inner);
        refused_as_exposing_labels(&spec, &plan, &format!("a plan mounting {what}"), &marker)?;
    }
    Ok(())
}

/// `plan` is refused as exposing the labels directory before `spec` runs (it would touch
/// `marker`).
fn refused_as_exposing_labels(
    spec: &ProcessSpec,
    plan: &SandboxPlan,
    what: &str,
    marker: &Path,
) -> Result<(), Failed> {
    match contained(Backend::Bubblewrap, spec, plan) {
        Ok(_) => return Err(format!("{what} ran").into()),
        Err(e) => ensure!(
            msg(&e).contains("hidden_path_exposed") && msg(&e).contains("labels-private"),
            "{what}: unexpected refusal: {}",
            msg(&e)
        ),
    }
    ensure!(!marker.exists(), "{what}: the agent ran before the refusal");
    Ok(())
}

fn msg(f: &Failed) -> String {
    f.message().unwrap_or("").to_string()
}

/// Every hidden path is checked, each as the directory it names: a second hidden path is
/// weighed like the first, and one given through a symlink is resolved before the mounts are
/// compared with it, so a mount inside its target is still refused.
pub(super) fn bwrap_every_hidden_path() -> Result<(), Failed> {
    if !bwrap_ready()? {
        return Ok(());
    }
    let p = Project::new();
    let inner = p.labels.join("by-class");
    std::fs::create_dir_all(&inner)?;
    let elsewhere = tempfile::tempdir()?;
    let unmounted = elsewhere.path().join("other-labels");
    std::fs::create_dir_all(&unmounted)?;
    let link = elsewhere.path().join("labels-link");
    std::os::unix::fs::symlink(&p.labels, &link)?;
    let marker = p.run.join("workspace/ran");
    let spec = p.spec("sh", &format!("touch '{}'", marker.display()));
    let hidden_sets = [
        (
            "the second of two hidden paths",
            vec![unmounted.clone(), p.labels.clone()],
        ),
        ("a hidden path given through a symlink", vec![link.clone()]),
    ];
    for (what, hidden) in hidden_sets {
        let mut plan = p.plan();
        plan.hidden = hidden;
        plan.extra_ro.push(inner.clone());
        refused_as_exposing_labels(
            &spec,
            &plan,
            &format!("{what}: a plan mounting a directory inside it"),
            &marker,
        )?;
    }
    Ok(())
}

/// The agent runs in its own process namespace, its own session and on its own /tmp: it
/// cannot see the engine's process (so cannot read its environment or signal it), its session
/// leader is inside the sandbox (so it has no terminal of the engine's to write keystrokes
/// into), and what it writes to /tmp vanishes with it instead of landing on the host.
pub(super) fn bwrap_isolation() -> Result<(), Failed> {
    if !bwrap_ready()? {
        return Ok(());
    }
    let p = Project::new();
    let engine_pid = std::process::id();
    let engine_name = proc_name(&std::fs::read_to_string("/proc/self/status")?);
    let engine_sid = session_of(&std::fs::read_to_string("/proc/self/stat")?)?;
    let probe = format!("anvil-bench-tmp-probe-{}", ulid::Ulid::new());
    let host_tmp = [
        Path::new("/tmp").join(&probe),
        std::env::temp_dir().join(&probe),
    ];
    let script = format!(
        r#"echo "STAT $(cat /proc/self/stat)"
        echo "ENGINE $(head -n 1 /proc/{engine_pid}/status 2>/dev/null)"
        echo inside > /tmp/{probe} && echo "WROTE tmp"
        true"#
    );
    let ran = contained(Backend::Bubblewrap, &p.spec("sh", &script), &p.plan());
    let leaked: Vec<&Path> = host_tmp
        .iter()
        .map(|t| t.as_path())
        .filter(|t| t.exists())
        .collect();
    for t in &leaked {
        let _ = std::fs::remove_file(t);
    }
    let ran = ran?;
    let out = lines(&ran, Stream::Stdout);
    let field = |key: &str| {
        out.iter()
            .find_map(|l| l.strip_prefix(key).map(str::trim))
            .map(str::to_owned)
    };
    ensure!(
        out.iter().any(|l| l == "WROTE tmp"),
        "the agent could not write its own /tmp: {out:?} {:?}",
        lines(&ran, Stream::Stderr)
    );
    ensure!(
        leaked.is_empty(),
        "the agent's /tmp is the host's: {leaked:?} appeared outside"
    );
    let engine_seen = field("ENGINE ").unwrap_or_default();
    ensure!(
        engine_seen.is_empty() || proc_name(&engine_seen) != engine_name,
        "the engine's process {engine_pid} ({engine_name}) is visible inside: {engine_seen:?}"
    );
    let stat = field("STAT ").ok_or_else(|| format!("no stat line: {out:?}"))?;
    let sid = session_of(&stat)?;
    ensure!(
        sid != 0 && sid != engine_sid,
        "the agent's session ({sid}) is not its own (the engine's is {engine_sid}; 0 means its \
         leader is outside the sandbox)"
    );
    Ok(())
}

/// The `Name:` of a `/proc/PID/status` text.
fn proc_name(status: &str) -> String {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Name:"))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The session id of a `/proc/PID/stat` line: the fourth field after the command's `)`.
fn session_of(stat: &str) -> Result<i64, Failed> {
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(3))
        .and_then(|sid| sid.parse().ok())
        .ok_or_else(|| format!("unreadable /proc stat line: {stat:?}").into())
}
