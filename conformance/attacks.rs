//! The adversarial corpus: attacks on a run by whoever can write where the agent writes —
//! and, run natively, anywhere in the run. Each trial is named for what it attempts and
//! asserts the refusal by kind and text (through the CLI binary and its exit code), that
//! nothing outside the run changed, and that the run still verifies or is reported broken
//! by file and field.
//!
//! `seal` and `journal`: engine-owned files edited after rails ran (X-TAMP). `crash`: a kill at every
//! commit point of every rail (X-CRASH). `links`: symlinks and special files planted where
//! the engine reads (X-LINK). `races`: 64-way concurrency (X-CONC). `paths`: evidence
//! paths leaving the boundary (X-TRAV). `floods`: deep and huge documents (X-FLOOD).

mod crash;
mod floods;
mod journal;
mod links;
mod paths;
mod races;
mod seal;

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::Failed;
use serde_json::Value;

use crate::support::{
    UnitRun, World, failed, frozen_unit, stderr, stdout, unit_proposal, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    let mut all = seal::checks();
    all.extend(journal::checks());
    all.extend(crash::checks());
    all.extend(links::checks());
    all.extend(races::checks());
    all.extend(paths::checks());
    all.extend(floods::checks());
    all
}

const REJECTED: i32 = anvil_bench::cli::exit::REJECTED as i32;

/// Runs a trial's setup with relaxed durability: the runs are disposable, and skipping
/// fsync keeps the corpus fast. The attacked rails themselves run durably in the binary.
pub(crate) fn quick<T>(setup: impl FnOnce() -> T) -> T {
    anvil_bench::fsio::relaxed(setup)
}

/// What is at each path under `dir`, never following a link or opening a special file:
/// a regular file's hash, `dir`, `symlink -> target`, or `special`.
pub(crate) fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(base).unwrap().to_path_buf();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let what = if meta.file_type().is_symlink() {
                format!(
                    "symlink -> {}",
                    std::fs::read_link(&path).unwrap().display()
                )
            } else if meta.is_dir() {
                walk(base, &path, out);
                "dir".into()
            } else if meta.is_file() {
                anvil_bench::canon::bytes_hash(&std::fs::read(&path).unwrap_or_default())
            } else {
                format!("special {}", meta.mode())
            };
            out.insert(rel, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Everything in the world (repository, AIR, labels, other runs) except the run `run`.
pub(crate) fn outside(w: &World, run: &Path) -> BTreeMap<PathBuf, String> {
    let rel = run.strip_prefix(w.root()).unwrap_or(run).to_path_buf();
    snapshot(w.root())
        .into_iter()
        .filter(|(p, _)| !p.starts_with(&rel))
        .collect()
}

/// The run as the attacker left it, minus the lock (a refused rail may move its fence).
pub(crate) fn run_files(run: &Path) -> BTreeMap<PathBuf, String> {
    let mut s = snapshot(run);
    s.remove(Path::new(".lock"));
    s
}

/// The paths whose entries differ between two snapshots.
pub(crate) fn changed(
    a: &BTreeMap<PathBuf, String>,
    b: &BTreeMap<PathBuf, String>,
) -> Vec<PathBuf> {
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// Runs `anvil-bench case <rail> <run> <args…> --json`.
pub(crate) fn rail(w: &World, rail: &str, run: &Path, args: &[&str]) -> Output {
    let mut all = vec!["case", rail, run.to_str().unwrap()];
    all.extend_from_slice(args);
    all.push("--json");
    w.cli(&all)
}

/// Runs the CLI with a deadline: a command still running after `secs` is killed and the
/// trial fails (a planted FIFO must never hang the engine).
pub(crate) fn cli_within(w: &World, args: &[&str], secs: u64) -> Result<Output, Failed> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(args)
        .current_dir(w.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(failed)?;
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if child.try_wait().map_err(failed)?.is_some() {
            return child.wait_with_output().map_err(failed);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("`anvil-bench {}` hung for {secs}s", args.join(" ")).into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The CLI refused with exit 1 and a JSON error of `kind` whose message names each of
/// `names`, without a panic. Returns the message.
pub(crate) fn refused(out: &Output, kind: &str, names: &[&str]) -> Result<String, Failed> {
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let got = doc["error"]["kind"].as_str().unwrap_or("(none)");
    let message = doc["error"]["message"].as_str().unwrap_or("").to_string();
    let err = stderr(out);
    ensure!(
        !err.contains("panicked") && !err.contains("overflow"),
        "the command panicked: {err}"
    );
    ensure!(
        out.status.code() == Some(REJECTED) && got == kind,
        "expected exit {REJECTED} and kind `{kind}`, got exit {:?} and kind `{got}`: {message}{err}{}",
        out.status.code(),
        stdout(out).chars().take(1500).collect::<String>()
    );
    for name in names {
        ensure!(
            message.contains(name),
            "the refusal does not name `{name}`: {message}"
        );
    }
    Ok(message)
}

/// `case verify --json`: its exit code and report (Null when it printed none).
pub(crate) fn verify(w: &World, run: &Path) -> (Option<i32>, Value) {
    let out = w.cli(&["case", "verify", run.to_str().unwrap(), "--json"]);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), doc)
}

/// The run verifies through the CLI: exit 0, no tamper, drift or staleness.
pub(crate) fn verifies(w: &World, run: &Path) -> Result<(), Failed> {
    let (code, doc) = verify(w, run);
    ensure!(
        code == Some(0) && doc["tamper"].as_array().is_some_and(Vec::is_empty),
        "`case verify` does not pass (exit {code:?}): {doc}"
    );
    Ok(())
}

/// The run is reported broken: `case verify` exits 1 with a tamper entry naming `file`
/// (and `field`, when given), and `case show` exits 1 saying TAMPERED.
pub(crate) fn reported(
    w: &World,
    run: &Path,
    file: &str,
    field: Option<&str>,
) -> Result<(), Failed> {
    let (code, doc) = verify(w, run);
    let named = doc["tamper"].as_array().is_some_and(|t| {
        t.iter()
            .any(|b| b["file"] == file && field.is_none_or(|f| b["field"] == f))
    });
    ensure!(
        code == Some(REJECTED) && named,
        "`case verify` does not report `{file}` ({field:?}) as tampered (exit {code:?}): {doc}"
    );
    // `case show` says so, or (when lifecycle.json itself is unreadable) refuses naming it.
    let show = w.cli(&["case", "show", run.to_str().unwrap()]);
    ensure!(
        show.status.code() == Some(REJECTED)
            && (stdout(&show).contains("TAMPERED:") || stderr(&show).contains(file)),
        "`case show` does not say the run is tampered (exit {:?}): {}{}",
        show.status.code(),
        stdout(&show),
        stderr(&show)
    );
    Ok(())
}

/// The engine's leftovers in the run: `.*.pending-*` and `.*.tmp-*` files.
pub(crate) fn leftovers(run: &Path) -> Vec<PathBuf> {
    snapshot(run)
        .into_keys()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with('.') && (name.contains(".pending-") || name.contains(".tmp-"))
        })
        .collect()
}

/// Every regular file of the run that contains `needle` (symlinks and FIFOs are not opened).
pub(crate) fn files_containing(run: &Path, needle: &str) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    for (rel, what) in snapshot(run) {
        if what == "dir" || what.starts_with("symlink") || what.starts_with("special") {
            continue;
        }
        let mut bytes = Vec::new();
        if let Ok(mut f) = std::fs::File::open(run.join(&rel)) {
            let _ = f.read_to_end(&mut bytes);
        }
        if bytes
            .windows(needle.len())
            .any(|win| win == needle.as_bytes())
        {
            hits.push(rel);
        }
    }
    hits
}

/// Rewrites a JSON file through `edit` (pretty, as the engine writes it).
pub(crate) fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut v);
    let mut text = serde_json::to_string_pretty(&v).unwrap();
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// A file outside every run and every inspect scope holding a secret, as a labels file.
pub(crate) fn secret_file(w: &World, name: &str, body: &str) -> PathBuf {
    let dir = w.root().join("labels");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

pub(crate) const SECRET: &str = "CANARY-7f3a9c-do-not-leak";

/// A frozen unit run with `proposal` (setting `unit` to `value`) written and validated.
pub(crate) fn validated(w: &World, value: &str) -> Result<UnitRun, Failed> {
    let u = frozen_unit(w)?;
    write_proposal(&u.run, &unit_proposal(value, &[&u.claim]));
    crate::support::rails::validate(&u.run, None, false).map_err(failed)?;
    Ok(u)
}

/// A validated (passing) unit run, finalized as `proposal_generated`.
pub(crate) fn finalized(w: &World) -> Result<UnitRun, Failed> {
    let u = validated(w, "s")?;
    crate::support::rails::finalize(&u.run, None, None, None).map_err(failed)?;
    Ok(u)
}

/// Makes a FIFO at `path`.
pub(crate) fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}
