//! What the cap, special-file and output trials share: the CLI run with an environment and
//! a deadline (a hang fails the trial instead of the suite), FIFOs and device nodes, and a
//! snapshot of a tree that never reads (and so never blocks on) a special file.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use libtest_mimic::Failed;

/// How long a refusal may take: these commands answer at once or hang.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// `anvil-bench ARGS` in `dir` with `env` added, stdin from `stdin`; killed and failed if it
/// has not ended by [`DEADLINE`].
pub fn run(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Stdio,
) -> Result<Output, Failed> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_anvil-bench"));
    cmd.args(args)
        .current_dir(dir)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().map_err(|e| format!("spawn: {e}"))?;
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    if let Ok(out) = rx.recv_timeout(DEADLINE) {
        out.map_err(|e| format!("wait: {e}").into())
    } else {
        // SAFETY: signalling the child this function spawned (it has not been reaped).
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
        Err(format!("`anvil-bench {}` hung for {DEADLINE:?}", args.join(" ")).into())
    }
}

/// [`run`] with no extra environment and stdin closed.
pub fn cli(dir: &Path, args: &[&str]) -> Result<Output, Failed> {
    run(dir, args, &[], Stdio::null())
}

/// Fails unless `out` exited 1 with every one of `needles` in its stderr.
pub fn refused(out: &Output, needles: &[&str]) -> Result<String, Failed> {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.code() != Some(1) {
        return Err(format!("expected exit 1, got {:?}: {err}", out.status.code()).into());
    }
    for n in needles {
        if !err.contains(n) {
            return Err(format!("the refusal does not say `{n}`: {err}").into());
        }
    }
    if err.contains("panicked") {
        return Err(format!("a refusal panicked: {err}").into());
    }
    Ok(err)
}

/// A valid one-request investigation batch on the run `run_id`.
pub fn list_files_request(run_id: &str) -> serde_json::Value {
    serde_json::json!({"format": "anvil-investigation-request", "formatVersion": 1,
        "runId": run_id, "requests": [{"requestId": "a", "operation": "source.list_files",
        "arguments": {"offset": 0, "limit": 5}}]})
}

/// Makes a FIFO at `path` (no writer: opening it for reading blocks).
pub fn mkfifo(path: &Path) -> PathBuf {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
    path.to_path_buf()
}

/// A character device to aim an output at: a fresh `/dev/full` twin inside `dir` when this
/// process may make one (a broken check then replaces only the twin), else `/dev/full`
/// itself (which an unprivileged rename cannot replace).
pub fn device(dir: &Path) -> PathBuf {
    let path = dir.join("full");
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; makedev(1, 7) is /dev/full.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) };
    if rc == 0 {
        path
    } else {
        PathBuf::from("/dev/full")
    }
}

/// Every entry under `dir` by relative path: a regular file by its hash, a symlink by its
/// target, anything else by its kind and inode. Never reads a special file.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let ty = meta.file_type();
            let what = if ty.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else if ty.is_symlink() {
                format!("link {:?}", std::fs::read_link(&path).ok())
            } else if ty.is_file() {
                anvil_bench::canon::bytes_hash(&std::fs::read(&path).unwrap_or_default())
            } else {
                let kind = if ty.is_fifo() { "fifo" } else { "special" };
                format!("{kind} inode {} rdev {}", meta.ino(), meta.rdev())
            };
            out.insert(rel, what);
        }
    }
    out
}

/// Fails unless `path` is still a character device with the same device number.
pub fn still_device(path: &Path, rdev: u64) -> Result<(), Failed> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_char_device() && m.rdev() == rdev => Ok(()),
        Ok(m) => Err(format!("`{}` was replaced: now {:?}", path.display(), m.file_type()).into()),
        Err(e) => Err(format!("`{}` is gone: {e}", path.display()).into()),
    }
}
