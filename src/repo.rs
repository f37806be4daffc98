//! Facts about the repository under investigation: its revision.
//!
//! The engine reads the revision with `git` itself (never from the agent), so a run's
//! `sourceRevision` is what the repository really was at open.

use std::path::Path;
use std::process::{Command, Stdio};

/// The revision recorded when the repository is not a git work tree or has no commits.
pub const NO_REVISION: &str = "none";

/// `git rev-parse HEAD` of `repo` when `repo` is the top of a git work tree, else `none`.
///
/// A directory nested inside some other repository is not that repository: its revision
/// would say nothing about the files the case reads, so it records `none`.
pub fn revision(repo: &Path) -> String {
    // One spawn answers both questions: the top of the work tree, then HEAD (absent, and
    // the call failing, when there is no commit yet).
    let Some(out) = git(
        repo,
        &["rev-parse", "--show-toplevel", "--verify", "-q", "HEAD"],
    ) else {
        return NO_REVISION.into();
    };
    let mut lines = out.lines();
    let (Some(top), Some(head)) = (lines.next(), lines.next()) else {
        return NO_REVISION.into();
    };
    let same = match (
        std::fs::canonicalize(top.trim()),
        std::fs::canonicalize(repo),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let head = head.trim();
    if !same || head.is_empty() {
        return NO_REVISION.into();
    }
    head.to_string()
}

fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .env("GIT_CEILING_DIRECTORIES", "")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
