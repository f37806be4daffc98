//! Execution backends and containment: native consent, no implicit degradation, the
//! attestation, repository cleanliness, and bubblewrap enforcement — read-only repository
//! and run root, labels out of reach, the bridge as the only network path (R-CON-1, 2, 3, 4,
//! 6, 7, 8).
//!
//! Trials that need `bwrap` go through [`bwrap_ready`]: with `CI=true` a missing or unusable
//! bwrap fails them; elsewhere they print why and pass as skipped. The bubblewrap trials
//! live in [`bubblewrap`] (filesystem, labels, rails) and [`network`] (the bridge).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anvil_bench::cli::exit::ToExitCode;
use anvil_bench::process::{CancelHandle, Outcome, ProcessSpec, Stream};
use anvil_bench::sandbox::{
    Attestation, Backend, BackendKind, ContainedRun, Guarantee, SandboxError, SandboxPlan,
    run_contained_blocking,
};
use libtest_mimic::Failed;

use crate::support::git;
use crate::{Check, ensure};

mod bubblewrap;
mod network;

use bubblewrap::{
    bwrap_every_hidden_path, bwrap_isolation, bwrap_labels, bwrap_mount_inside_labels, bwrap_rails,
    bwrap_writes,
};
use network::{bwrap_network, bwrap_proxy};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "containment::native_refuses_without_consent_with_the_documented_message",
            rules: &["R-CON-1"],
            run: native_refuses,
        },
        Check {
            name: "containment::the_cli_runs_natively_only_with_the_flag",
            rules: &["R-CON-1", "R-CON-2"],
            run: the_cli_runs_natively_only_with_the_flag,
        },
        Check {
            name: "containment::a_missing_bwrap_is_an_error_never_a_fall_back_to_native",
            rules: &["R-CON-2"],
            run: no_implicit_degradation,
        },
        Check {
            name: "containment::each_backend_attests_what_it_enforces_and_what_it_cannot",
            rules: &["R-CON-3"],
            run: attestations,
        },
        Check {
            name: "containment::an_edit_to_a_git_repository_is_a_violation_naming_the_paths",
            rules: &["R-CON-4"],
            run: git_violation,
        },
        Check {
            name: "containment::an_edit_to_a_non_git_repository_is_caught_by_content_hash",
            rules: &["R-CON-4"],
            run: tree_violation,
        },
        Check {
            name: "containment::bubblewrap_allows_writes_to_workspace_and_output_only",
            rules: &["R-CON-6"],
            run: bwrap_writes,
        },
        Check {
            name: "containment::rails_called_inside_bubblewrap_reach_the_run_through_the_engine",
            rules: &["R-CON-6"],
            run: bwrap_rails,
        },
        Check {
            name: "containment::bubblewrap_does_not_mount_the_labels_directory",
            rules: &["R-CON-7"],
            run: bwrap_labels,
        },
        Check {
            name: "containment::bubblewrap_refuses_a_mount_inside_the_labels_directory",
            rules: &["R-CON-7"],
            run: bwrap_mount_inside_labels,
        },
        Check {
            name: "containment::bubblewrap_checks_every_hidden_path_and_resolves_its_symlinks",
            rules: &["R-CON-7"],
            run: bwrap_every_hidden_path,
        },
        Check {
            name: "containment::bubblewrap_gives_the_agent_its_own_processes_session_and_tmp",
            rules: &["R-CON-5", "R-CON-6"],
            run: bwrap_isolation,
        },
        Check {
            name: "containment::bubblewrap_reaches_the_model_endpoint_and_no_other_host_port",
            rules: &["R-CON-8"],
            run: bwrap_network,
        },
        Check {
            name: "containment::the_connect_proxy_admits_the_allowlist_and_refuses_and_logs_the_rest",
            rules: &["R-CON-8"],
            run: bwrap_proxy,
        },
    ]
}

const SEED_REFUSAL: &str = "Native execution cannot enforce repository read-only and case-only writes. Use a sandboxed backend or pass --allow-degraded-native to acknowledge the reduced containment.";
pub(super) const SH_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Whether the bubblewrap trials can run here. With `CI=true` a missing or unusable bwrap
/// fails the trial; elsewhere the trial prints why and passes as skipped.
pub(super) fn bwrap_ready() -> Result<bool, Failed> {
    let probe = Command::new("bwrap")
        .args([
            "--unshare-net",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "true",
        ])
        .stdin(Stdio::null())
        .output();
    let problem = match probe {
        Ok(out) if out.status.success() => return Ok(true),
        Ok(out) => format!(
            "bwrap cannot create a sandbox here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => {
            format!("bwrap is not available ({e}); install it with apt-get install bubblewrap")
        }
    };
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        return Err(format!("CI=true requires bubblewrap: {problem}").into());
    }
    eprintln!("skipped (needs bubblewrap): {problem}");
    Ok(false)
}

/// A project with a repository, a hidden labels directory and a (synthetic) run directory.
pub(super) struct Project {
    _dir: tempfile::TempDir,
    pub(super) root: PathBuf,
    pub(super) repo: PathBuf,
    pub(super) labels: PathBuf,
    pub(super) run: PathBuf,
}

pub(super) const SECRET: &str = "the-expected-answer-is-seconds";

impl Project {
    pub(super) fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let repo = root.join("repo");
        let labels = root.join("labels-private");
        let run = root.join("cases/annotate-unit--x/01RUN");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/lib.py"), "TIMEOUT = 30  # seconds\n").unwrap();
        std::fs::create_dir_all(&labels).unwrap();
        std::fs::write(
            labels.join("answer.json"),
            format!("{{\"unit\": \"{SECRET}\"}}\n"),
        )
        .unwrap();
        for sub in ["workspace", "output"] {
            std::fs::create_dir_all(run.join(sub)).unwrap();
        }
        for file in [
            "case.json",
            "CASE.md",
            "expected-output.schema.json",
            "lifecycle.json",
        ] {
            std::fs::write(run.join(file), format!("{file} as the engine wrote it\n")).unwrap();
        }
        Project {
            _dir: dir,
            root,
            repo,
            labels,
            run,
        }
    }

    pub(super) fn plan(&self) -> SandboxPlan {
        SandboxPlan {
            repo: self.repo.clone(),
            run_dir: self.run.clone(),
            hidden: vec![self.labels.clone()],
            endpoints: Vec::new(),
            extra_ro: Vec::new(),
            anvil_bench: PathBuf::from(env!("CARGO_BIN_EXE_anvil-bench")),
            rail_inputs: Vec::new(),
        }
    }

    /// `program -c script` in the run directory, with PATH and the project's paths set.
    pub(super) fn spec(&self, program: &str, script: &str) -> ProcessSpec {
        let env = BTreeMap::from(
            [
                ("PATH", SH_PATH.to_string()),
                ("REPO", self.repo.display().to_string()),
                ("RUN", self.run.display().to_string()),
                ("LABELS", self.labels.display().to_string()),
                ("PROJECT", self.root.display().to_string()),
            ]
            .map(|(k, v)| (k.to_string(), v)),
        );
        ProcessSpec {
            program: program.into(),
            args: vec!["-c".into(), script.into()],
            cwd: self.run.clone(),
            env,
            timeout: Duration::from_mins(1),
            install_hint: None,
            log_path: None,
        }
    }
}

pub(super) fn contained(
    backend: Backend,
    spec: &ProcessSpec,
    plan: &SandboxPlan,
) -> Result<ContainedRun, Failed> {
    run_contained_blocking(&backend, spec, plan, &CancelHandle::new(), |_| {})
        .map_err(|e| Failed::from(format!("{} ({})", e, e.kind())))
}

pub(super) fn lines(run: &ContainedRun, stream: Stream) -> Vec<String> {
    run.record
        .lines
        .iter()
        .filter(|l| l.stream == stream)
        .map(|l| l.text.clone())
        .collect()
}

const NATIVE_OK: Backend = Backend::Native {
    allow_degraded_native: true,
};

/// Regression: a subcommand that passed `true` for the consent instead of the flag would
/// run an agent natively for a caller who never asked for degraded containment.
fn the_cli_runs_natively_only_with_the_flag() -> Result<(), Failed> {
    // `case investigate --backend native`: refused with the seed's message, exit 2.
    let w = crate::support::World::new();
    let run = w.open_unit()?.run_dir;
    let marker = w.root().join("ran");
    let touch = format!("touch '{}'", marker.display());
    let investigate = |consent: bool| {
        let mut args = vec![
            "case",
            "investigate",
            run.to_str().unwrap(),
            "--driver",
            "command",
            "--backend",
            "native",
        ];
        if consent {
            args.push("--allow-degraded-native");
        }
        args.extend(["--command", "sh", "-c", touch.as_str()]);
        w.cli(&args)
    };
    let o = investigate(false);
    ensure!(
        o.status.code() == Some(2)
            && crate::support::stderr(&o).contains(SEED_REFUSAL)
            && !marker.exists(),
        "case investigate --backend native without consent: exit {:?}, ran {}, {}",
        o.status.code(),
        marker.exists(),
        crate::support::stderr(&o)
    );
    investigate(true);
    ensure!(
        marker.exists(),
        "with --allow-degraded-native the agent never ran"
    );
    // `battery --backend native`: refused before any trial, naming the flag.
    let f = crate::battery::Fixture::new(&[crate::battery::PROPOSAL]);
    let marker = f.root().join("ran");
    let touch = format!("touch '{}'", marker.display());
    let out = f.out("out");
    let args = f.battery_args(&[
        "--out",
        out.to_str().unwrap(),
        "--no-controls",
        "--investigator",
        "command",
        "--backend",
        "native",
        "--command",
        "sh",
        "-c",
        touch.as_str(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = f.cli(&args);
    ensure!(
        o.status.code() == Some(2)
            && crate::support::stderr(&o).contains("--allow-degraded-native")
            && !marker.exists()
            && !out.join("results.json").exists(),
        "battery --backend native without consent: exit {:?}, ran {}, {}",
        o.status.code(),
        marker.exists(),
        crate::support::stderr(&o)
    );
    Ok(())
}

fn native_refuses() -> Result<(), Failed> {
    let p = Project::new();
    let marker = p.run.join("workspace/ran");
    let spec = p.spec("sh", &format!("touch '{}'", marker.display()));
    let backend = Backend::from_flags("native", false)?;
    let err = match run_contained_blocking(&backend, &spec, &p.plan(), &CancelHandle::new(), |_| {})
    {
        Ok(_) => return Err("native execution ran without --allow-degraded-native".into()),
        Err(e) => e,
    };
    ensure!(err.to_string() == SEED_REFUSAL, "refusal text: {err}");
    ensure!(
        matches!(err, SandboxError::NativeNotAcknowledged) && err.exit_code() == 2,
        "refusal kind {} exit {}",
        err.kind(),
        err.exit_code()
    );
    ensure!(
        !marker.exists(),
        "the agent ran although native execution was refused"
    );
    let ran = contained(Backend::from_flags("native", true)?, &spec, &p.plan())?;
    ensure!(
        ran.record.outcome == Outcome::Completed && marker.exists(),
        "with consent the agent did not run: {:?}",
        ran.record.failure_message()
    );
    Ok(())
}

fn no_implicit_degradation() -> Result<(), Failed> {
    let p = Project::new();
    // A PATH with a shell but no bwrap.
    let bin = p.root.join("bin-without-bwrap");
    std::fs::create_dir_all(&bin)?;
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh"))?;
    let marker = p.run.join("workspace/ran");
    let mut spec = p.spec("sh", &format!("touch '{}'", marker.display()));
    spec.env.insert("PATH".into(), bin.display().to_string());
    // Even with consent to degraded native execution, asking for bubblewrap gets bubblewrap.
    let backend = Backend::from_flags("bubblewrap", true)?;
    ensure!(
        backend == Backend::Bubblewrap,
        "the flag changed the backend: {backend:?}"
    );
    let err = match run_contained_blocking(&backend, &spec, &p.plan(), &CancelHandle::new(), |_| {})
    {
        Ok(run) => {
            return Err(format!(
                "ran without bwrap, as {:?}: degradation was implicit",
                run.attestation.backend
            )
            .into());
        }
        Err(e) => e,
    };
    ensure!(
        matches!(err, SandboxError::BubblewrapMissing),
        "expected bubblewrap_missing, got {}: {err}",
        err.kind()
    );
    ensure!(
        err.to_string().contains("apt-get install bubblewrap"),
        "the error does not say how to install bubblewrap: {err}"
    );
    ensure!(
        !marker.exists(),
        "the agent ran natively after bwrap was not found"
    );
    Ok(())
}

fn attestations() -> Result<(), Failed> {
    let native = Attestation::for_backend(BackendKind::Native);
    let bubblewrap = Attestation::for_backend(BackendKind::Bubblewrap);
    for a in [&native, &bubblewrap] {
        for g in Guarantee::ALL {
            let listed =
                usize::from(a.enforced.contains(&g)) + usize::from(a.unenforced.contains(&g));
            ensure!(
                listed == 1,
                "{:?} lists `{}` {listed} times",
                a.backend,
                g.id()
            );
        }
    }
    for g in [
        Guarantee::RepositoryReadOnly,
        Guarantee::RunRootReadOnly,
        Guarantee::CaseOnlyWrites,
        Guarantee::LabelsUnreachable,
        Guarantee::NetworkIsolated,
        Guarantee::ModelEndpointOnly,
    ] {
        ensure!(!native.enforces(g), "native claims to enforce `{}`", g.id());
        ensure!(
            bubblewrap.enforces(g),
            "bubblewrap does not enforce `{}`",
            g.id()
        );
    }
    let json = serde_json::to_value(&native)?;
    ensure!(json["backend"] == "native", "backend: {json}");
    let unenforced: Vec<&str> = json["unenforced"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    for id in [
        "repository_read_only",
        "labels_unreachable",
        "network_isolated",
    ] {
        ensure!(
            unenforced.contains(&id),
            "native unenforced lacks `{id}`: {json}"
        );
    }
    ensure!(
        json["refusedConnections"].is_array() && json["enforced"].is_array(),
        "attestation is not camelCase with every list: {json}"
    );

    // A run records its backend's attestation.
    let p = Project::new();
    let ran = contained(NATIVE_OK, &p.spec("sh", "true"), &p.plan())?;
    ensure!(
        ran.attestation == native,
        "native run attested {:?}",
        ran.attestation
    );
    let record = serde_json::to_value(&ran)?;
    ensure!(
        record["attestation"]["backend"] == "native" && record["repositoryBefore"].is_object(),
        "the run record does not carry the attestation: {record}"
    );
    if !bwrap_ready()? {
        return Ok(());
    }
    let ran = contained(Backend::Bubblewrap, &p.spec("sh", "true"), &p.plan())?;
    ensure!(
        ran.record.outcome == Outcome::Completed,
        "bwrap run failed: {:?}",
        ran.record.failure_message()
    );
    ensure!(
        ran.attestation.backend == BackendKind::Bubblewrap
            && ran.attestation.unenforced.is_empty()
            && ran.attestation.enforced == Guarantee::ALL,
        "bubblewrap run attested {:?}",
        ran.attestation
    );
    // The attestation names every directory mounted beyond the system, the repository and
    // the run, and claims none when there is none.
    let also = |notes: &[String]| {
        notes
            .iter()
            .find(|n| n.starts_with("also mounted read-only"))
            .cloned()
    };
    ensure!(
        also(&ran.attestation.notes).is_none(),
        "a plan with nothing extra attested extra mounts: {:?}",
        ran.attestation.notes
    );
    let extra = p.root.join("tools");
    std::fs::create_dir_all(&extra)?;
    let mut plan = p.plan();
    plan.extra_ro.push(extra.clone());
    let ran = contained(Backend::Bubblewrap, &p.spec("sh", "true"), &plan)?;
    let named = also(&ran.attestation.notes).unwrap_or_default();
    ensure!(
        named.contains(&format!("`{}`", std::fs::canonicalize(&extra)?.display())),
        "an extra read-only mount is not attested: {:?}",
        ran.attestation.notes
    );
    Ok(())
}

fn git_violation() -> Result<(), Failed> {
    let p = Project::new();
    std::fs::write(p.repo.join("notes.txt"), "draft\n")?;
    git(&p.repo, &["init", "-q"]);
    git(&p.repo, &["add", "-A"]);
    git(&p.repo, &["commit", "-q", "-m", "initial"]);
    // Dirty before the run: a further edit must still count.
    std::fs::write(p.repo.join("notes.txt"), "draft, edited before the run\n")?;

    let clean = contained(
        NATIVE_OK,
        &p.spec("sh", "cat \"$REPO/src/lib.py\" >/dev/null"),
        &p.plan(),
    )?;
    ensure!(
        clean.violation.is_none(),
        "reading the repository is a violation: {:?}",
        clean.violation
    );

    let script = r#"echo x >> "$REPO/src/lib.py"; echo more >> "$REPO/notes.txt"; echo new > "$REPO/added.txt""#;
    let ran = contained(NATIVE_OK, &p.spec("sh", script), &p.plan())?;
    let v = ran
        .violation
        .ok_or("editing the repository was not detected")?;
    ensure!(
        v.changed == ["added.txt", "notes.txt", "src/lib.py"],
        "changed paths: {:?}",
        v.changed
    );
    ensure!(
        v.exit_code() == 4 && v.kind() == "containment_violation",
        "exit {} kind {}",
        v.exit_code(),
        v.kind()
    );
    ensure!(
        v.to_string().starts_with("containment violation"),
        "message: {v}"
    );

    let commit =
        r#"cd "$REPO" && git -c user.name=a -c user.email=a@example.invalid commit -qam agent"#;
    let ran = contained(NATIVE_OK, &p.spec("sh", commit), &p.plan())?;
    let v = ran
        .violation
        .ok_or("a commit by the agent was not detected")?;
    ensure!(
        v.changed.iter().any(|c| c == "HEAD"),
        "HEAD change not named: {:?}",
        v.changed
    );
    Ok(())
}

fn tree_violation() -> Result<(), Failed> {
    let p = Project::new();
    let clean = contained(
        NATIVE_OK,
        &p.spec("sh", "ls \"$REPO\" >/dev/null"),
        &p.plan(),
    )?;
    ensure!(
        clean.violation.is_none(),
        "listing is a violation: {:?}",
        clean.violation
    );
    ensure!(
        serde_json::to_value(&clean.repository_before)?["kind"] == "tree",
        "a non-git repository was not recorded by content hash"
    );
    let script = r#"printf 'TIMEOUT = 31  # seconds\n' > "$REPO/src/lib.py"; mkdir "$REPO/empty""#;
    let ran = contained(NATIVE_OK, &p.spec("sh", script), &p.plan())?;
    let v = ran
        .violation
        .ok_or("editing a non-git repository was not detected")?;
    ensure!(
        v.changed == ["empty", "src/lib.py"],
        "changed paths: {:?}",
        v.changed
    );
    Ok(())
}
