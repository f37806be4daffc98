//! Facts about the repository under investigation: its revision.
//!
//! The engine reads the revision itself, in-process (never from the agent, never by
//! spawning `git`), so a run's `sourceRevision` is what the repository really was at open.
//! Where the engine does spawn `git` (a snapshot's status, a template's commit), it goes
//! through [`git_command`].

pub mod committed;
pub mod digest;
mod git_command;

pub use git_command::git_command;
#[cfg(test)]
pub(crate) use git_command::tests::hides_nothing_from;

use std::path::Path;
#[cfg(test)]
use std::process::{Command, Stdio};

/// The revision recorded when the repository is not a git work tree or has no commits.
pub const NO_REVISION: &str = "none";

/// The commit HEAD names when `repo` is the top of a git work tree, else `none`. Read
/// in-process (no `git` subprocess on any rail): the plain layout directly, anything else
/// (a linked worktree, an unusual ref) through `gix`, opened isolated from global config.
///
/// A directory nested inside some other repository is not that repository: its revision
/// would say nothing about the files the case reads, so it records `none`.
pub fn revision(repo: &Path) -> String {
    if let Some(rev) = read_head(repo) {
        return rev;
    }
    let Ok(opened) = gix::open_opts(repo, gix::open::Options::isolated()) else {
        return NO_REVISION.into();
    };
    let same = match (
        opened.workdir().map(std::fs::canonicalize),
        std::fs::canonicalize(repo),
    ) {
        (Some(Ok(a)), Ok(b)) => a == b,
        _ => false,
    };
    if !same {
        return NO_REVISION.into();
    }
    match opened.head_id() {
        Ok(id) => id.to_string(),
        Err(_) => NO_REVISION.into(),
    }
}

/// The revision read from `repo/.git` directly, for the plain layout only: a `.git`
/// directory (so `repo` is the top of its work tree) that is not a linked worktree, whose
/// `HEAD` is an object id or a symbolic ref to a loose or packed branch. Anything else —
/// a `.git` file, `commondir`, an unusual ref — is `None`, and `git` itself is asked.
/// Spawning `git` on every rail was most of a rail's wall time.
fn read_head(repo: &Path) -> Option<String> {
    let dir = repo.join(".git");
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    if !meta.is_dir() || dir.join("commondir").exists() {
        return None;
    }
    let read = |rel: &str| -> Option<String> {
        let p = dir.join(rel);
        // Never through a symlink: a planted link must not choose the revision.
        if !std::fs::symlink_metadata(&p).ok()?.is_file() {
            return None;
        }
        std::fs::read_to_string(p).ok()
    };
    let head = read("HEAD")?;
    let head = head.trim_end_matches('\n');
    if is_object_id(head) {
        return Some(head.to_string());
    }
    let name = head.strip_prefix("ref: ")?;
    if !name.starts_with("refs/heads/")
        || name
            .split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return None;
    }
    if let Some(loose) = read(name) {
        let id = loose.trim_end_matches('\n');
        return is_object_id(id).then(|| id.to_string());
    }
    if dir.join(name).exists() {
        return None;
    }
    match read("packed-refs") {
        Some(packed) => {
            for line in packed.lines() {
                if let Some((id, r)) = line.split_once(' ')
                    && r == name
                {
                    return is_object_id(id).then(|| id.to_string());
                }
            }
            // A branch with no commit yet.
            Some(NO_REVISION.into())
        }
        None if !dir.join("packed-refs").exists() => Some(NO_REVISION.into()),
        None => None,
    }
}

fn is_object_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64)
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

#[cfg(test)]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    }

    fn by_git(repo: &Path) -> String {
        let out = git(
            repo,
            &["rev-parse", "--show-toplevel", "--verify", "-q", "HEAD"],
        );
        out.and_then(|o| o.lines().nth(1).map(str::to_string))
            .unwrap_or_else(|| NO_REVISION.into())
    }

    #[test]
    fn reading_head_agrees_with_git_on_every_plain_layout() {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("skipped: git is not installed");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("r");
        std::fs::create_dir(&repo).unwrap();
        sh(&repo, &["init", "-q", "-b", "main"]);
        // No commit yet.
        assert_eq!(read_head(&repo), Some(NO_REVISION.into()));
        assert_eq!(revision(&repo), by_git(&repo));
        std::fs::write(repo.join("f"), "x").unwrap();
        sh(&repo, &["add", "f"]);
        sh(&repo, &["commit", "-q", "-m", "one"]);
        let loose = read_head(&repo).unwrap();
        assert_eq!(loose, by_git(&repo));
        // Packed refs only.
        sh(&repo, &["pack-refs", "--all"]);
        assert!(!repo.join(".git/refs/heads/main").exists());
        assert_eq!(read_head(&repo).unwrap(), loose);
        // Detached HEAD.
        std::fs::write(repo.join("f"), "y").unwrap();
        sh(&repo, &["commit", "-q", "-am", "two"]);
        sh(&repo, &["checkout", "-q", "--detach", "HEAD~1"]);
        assert_eq!(read_head(&repo).unwrap(), by_git(&repo));
        assert_eq!(read_head(&repo).unwrap(), loose);
        // A planted symlink for HEAD is never followed: git itself is asked.
        let head = repo.join(".git/HEAD");
        let real = std::fs::read_to_string(&head).unwrap();
        std::fs::write(
            tmp.path().join("fake"),
            "0000000000000000000000000000000000000000\n",
        )
        .unwrap();
        std::fs::remove_file(&head).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("fake"), &head).unwrap();
        assert_eq!(read_head(&repo), None);
        std::fs::remove_file(&head).unwrap();
        std::fs::write(&head, real).unwrap();
        // A linked worktree (a `.git` file) is read through gix, without spawning git.
        let linked = tmp.path().join("linked");
        sh(
            &repo,
            &["worktree", "add", "-q", linked.to_str().unwrap(), "main"],
        );
        assert_eq!(read_head(&linked), None);
        assert_eq!(revision(&linked), by_git(&linked));
        assert_ne!(revision(&linked), NO_REVISION);
        // A nested directory is not the top of the work tree.
        let nested = repo.join("sub");
        std::fs::create_dir(&nested).unwrap();
        assert_eq!(read_head(&nested), None);
        assert_eq!(revision(&nested), NO_REVISION);
    }
}
