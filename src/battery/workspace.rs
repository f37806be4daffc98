//! Trial workspaces: each scenario's repository committed once to a fresh git repository
//! at a neutral path, then copied byte for byte for every trial (R-BAT-6, R-BAT-7).
//!
//! Invariant: a trial's repository, AIR and cases dir live under a directory named by a
//! random id only — no class, scenario, corpus or label name — and the copy holds no
//! symlink, device or FIFO (a scenario that has one is refused by name).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::first_commit::{DATE, IDENTITY, MESSAGE};

/// Fixed identity and date.
const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_AUTHOR_NAME", IDENTITY.0),
    ("GIT_AUTHOR_EMAIL", IDENTITY.1),
    ("GIT_AUTHOR_DATE", DATE),
    ("GIT_COMMITTER_NAME", IDENTITY.0),
    ("GIT_COMMITTER_EMAIL", IDENTITY.1),
    ("GIT_COMMITTER_DATE", DATE),
];

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("`{path}`: {reason}")]
    Refused { path: PathBuf, reason: String },
    #[error("{action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("git {args}: {reason}")]
    Git { args: String, reason: String },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> WorkspaceError {
    let path = path.to_path_buf();
    move |source| WorkspaceError::Io {
        action,
        path,
        source,
    }
}

/// Whether `git` can be run here.
#[must_use]
pub fn git_available() -> bool {
    Command::new("git")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Copies the tree at `src` to `dst` (which must not exist): directories and regular files
/// only; anything else is refused, naming it.
///
/// # Errors
///
/// `WorkspaceError::Refused` naming the first entry that is neither a directory nor a
/// regular file (a symlink included), and `WorkspaceError::Io` when reading `src` or
/// creating or writing under `dst` fails (`dst` existing included).
pub fn copy_tree(src: &Path, dst: &Path) -> Result<(), WorkspaceError> {
    copy(src, dst, Special::Refuse, OwnGit::Keep).map(drop)
}

/// What [`copy`] does with a symlink, FIFO, socket or device: never follow it.
#[derive(Clone, Copy, PartialEq)]
enum Special {
    Refuse,
    Skip,
}

/// What [`copy`] does with an entry named `.git` (any case): a trial copies its template's
/// own git directory; a scenario's repository holds none (see
/// [`super::corpus::git_entries`]).
#[derive(Clone, Copy, PartialEq)]
enum OwnGit {
    Keep,
    Refuse,
}

/// Copies `src` to `dst`, directories and regular files; returns the special files skipped
/// (relative to `src`) when `special` is [`Special::Skip`].
fn copy(
    src: &Path,
    dst: &Path,
    special: Special,
    own_git: OwnGit,
) -> Result<Vec<String>, WorkspaceError> {
    std::fs::create_dir(dst).map_err(io("create", dst))?;
    let mut skipped = Vec::new();
    let mut stack = vec![(src.to_path_buf(), dst.to_path_buf())];
    while let Some((from, to)) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&from)
            .map_err(io("read", &from))?
            .collect::<Result<_, _>>()
            .map_err(io("read", &from))?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let path = entry.path();
            let target = to.join(entry.file_name());
            if own_git == OwnGit::Refuse && super::corpus::is_git_name(&entry.file_name()) {
                return Err(WorkspaceError::Refused {
                    path,
                    reason: "a scenario repository may not hold `.git` (the battery commits the copy itself; a git directory of its own would configure that git, hooks and filters included)".into(),
                });
            }
            let ty = entry.file_type().map_err(io("stat", &path))?;
            if ty.is_dir() {
                std::fs::create_dir(&target).map_err(io("create", &target))?;
                stack.push((path, target));
            } else if ty.is_file() {
                std::fs::copy(&path, &target).map_err(io("copy", &path))?;
            } else if special == Special::Skip {
                skipped.push(
                    path.strip_prefix(src)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                );
            } else {
                return Err(WorkspaceError::Refused {
                    path,
                    reason: if ty.is_symlink() {
                        "a scenario repository may not hold a symlink (it could reach outside the copy)".into()
                    } else {
                        "a scenario repository holds only directories and regular files".into()
                    },
                });
            }
        }
    }
    Ok(skipped)
}

/// Left out of [`tree_digest`]: git's index caches the files' stat data (times, inodes),
/// so two preparations of the same scenario would differ there and nowhere else (the
/// commit, its tree and the work tree are all hashed).
const VOLATILE: &str = ".git/index";

/// sha256 over the sorted (relative path, bytes) of every file under `dir` (but
/// [`VOLATILE`]).
///
/// # Errors
///
/// `WorkspaceError::Io` when a directory under `dir` cannot be listed, an entry cannot be
/// inspected, or a regular file cannot be read.
pub fn tree_digest(dir: &Path) -> Result<String, WorkspaceError> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(io("read", &d))? {
            let entry = entry.map_err(io("read", &d))?;
            let ty = entry.file_type().map_err(io("stat", &entry.path()))?;
            if ty.is_dir() {
                stack.push(entry.path());
            } else if entry.path().strip_prefix(dir).ok() != Some(Path::new(VOLATILE)) {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        let rel = f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .to_string_lossy()
            .into_owned();
        let meta = std::fs::symlink_metadata(&f).map_err(io("stat", &f))?;
        h.update(rel.as_bytes());
        h.update([0]);
        if meta.is_file() {
            let bytes = std::fs::read(&f).map_err(io("read", &f))?;
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        } else {
            // Never followed: a symlink or special file hashes as its kind.
            h.update(b"\xffnot-a-regular-file");
        }
    }
    Ok(format!("sha256:{}", hex(&h.finalize())))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut out, b| {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// `git` in `dir` as the battery runs it: isolated ([`crate::repo::git_command`]), with
/// the identity and date of [`GIT_ENV`], no reflog, no background maintenance, nowhere
/// above `dir` taken for a repository.
pub(super) fn git_command(dir: &Path) -> Command {
    let mut command = crate::repo::git_command(dir);
    command
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.logAllRefUpdates=false",
            // No `git maintenance run --auto --detach` after the commit: a process per
            // template, left running in the background while trials copy the repository.
            "-c",
            "maintenance.auto=false",
            "-c",
            "gc.auto=0",
        ])
        .envs(GIT_ENV.iter().copied())
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir));
    command
}

fn git(dir: &Path, args: &[&str]) -> Result<(), WorkspaceError> {
    let out = git_command(dir)
        .args(args)
        .output()
        .map_err(|e| WorkspaceError::Git {
            args: args.join(" "),
            reason: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(WorkspaceError::Git {
            args: args.join(" "),
            reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(())
}

/// Commits `repo` with git itself: a tree [`super::first_commit`] leaves to git (ignore or
/// attribute files, a name git protects). No template (sample hooks, description): every
/// trial copies this repository, so its `.git` is kept to what git needs.
fn commit_with_git(repo: &Path) -> Result<(), WorkspaceError> {
    git(repo, &["init", "-q", "--template="])?;
    git(repo, &["add", "-A"])?;
    git(repo, &["commit", "-q", "--no-verify", "-m", MESSAGE])
}

/// A scenario's starting state, prepared once: the repository (committed when git is
/// available) and the AIR, under `dir`.
#[derive(Debug, Clone)]
pub struct Template {
    pub repo: PathBuf,
    pub air: PathBuf,
    /// Digest of the repository tree (with `.git` when committed).
    pub digest: String,
}

/// Prepares the template of one scenario under `dir` (a neutral, fresh directory).
///
/// # Errors
///
/// `WorkspaceError::Io` when `dir` cannot be created or the AIR cannot be read (over the
/// document cap included) or written; `Refused` or `Io` from copying `repo` (see
/// [`copy_tree`]); `Git` when `commit` is set and a git step fails; and the errors of
/// [`tree_digest`].
pub fn prepare(
    repo: &Path,
    air: &Path,
    dir: &Path,
    commit: bool,
) -> Result<Template, WorkspaceError> {
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let t_repo = dir.join("repo");
    copy(repo, &t_repo, Special::Refuse, OwnGit::Refuse)?;
    if commit {
        // A tree of plain files is committed in-process (`first_commit`): the same commit
        // without three git processes; anything git interprets is left to git.
        let outcome = super::first_commit::commit(&t_repo).map_err(io("commit", &t_repo))?;
        if let super::first_commit::Outcome::NeedsGit(_) = outcome {
            commit_with_git(&t_repo)?;
        }
        // The objects in one pack: every trial copies this repository.
        git(&t_repo, &["repack", "-a", "-d", "-q", "-n"])?;
    }
    let t_air = dir.join("air.json");
    let bytes = crate::limits::read_capped(air, crate::limits::Limit::DocBytes)
        .map_err(|e| io("read", air)(e.into()))?;
    std::fs::write(&t_air, bytes).map_err(io("write", &t_air))?;
    Ok(Template {
        digest: tree_digest(&t_repo)?,
        repo: t_repo,
        air: t_air,
    })
}

/// One trial's fresh world: `<root>/<random>/{repo, air.json, cases/}`.
#[derive(Debug, Clone)]
pub struct TrialDir {
    pub dir: PathBuf,
    pub repo: PathBuf,
    pub air: PathBuf,
    pub cases: PathBuf,
    /// The digest of the repository copy as the trial starts.
    pub start_digest: String,
}

impl TrialDir {
    /// A fresh trial directory under `root`: a copy of the template's repository and AIR,
    /// and an empty `cases/`.
    ///
    /// # Errors
    ///
    /// `WorkspaceError::Io` when the trial directory or its `cases/` cannot be created or
    /// the AIR cannot be copied; the errors of copying the template repository
    /// ([`copy_tree`]) and of digesting it ([`tree_digest`]).
    pub fn create(root: &Path, template: &Template) -> Result<TrialDir, WorkspaceError> {
        let dir = root.join(ulid::Ulid::new().to_string().to_lowercase());
        std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
        let repo = dir.join("repo");
        copy_tree(&template.repo, &repo)?;
        let air = dir.join("air.json");
        std::fs::copy(&template.air, &air).map_err(io("copy", &template.air))?;
        let cases = dir.join("cases");
        std::fs::create_dir(&cases).map_err(io("create", &cases))?;
        let start_digest = tree_digest(&repo)?;
        Ok(TrialDir {
            dir,
            repo,
            air,
            cases,
            start_digest,
        })
    }

    /// Removes the trial's world (the case run has been moved out first).
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Moves (or copies, across file systems) `from` to `to`, which must not exist.
///
/// # Errors
///
/// `WorkspaceError::Io` when `to`'s parent cannot be created or, when renaming fails,
/// copying across file systems fails. Special files are skipped by that copy, not refused.
pub fn move_tree(from: &Path, to: &Path) -> Result<(), WorkspaceError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    }
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    copy_tree_lenient(from, to)?;
    let _ = std::fs::remove_dir_all(from);
    Ok(())
}

/// Like [`copy_tree`], but an agent-made symlink or special file in a kept run is skipped
/// (recorded by name in a `SKIPPED` file), never followed.
fn copy_tree_lenient(src: &Path, dst: &Path) -> Result<(), WorkspaceError> {
    let skipped = copy(src, dst, Special::Skip, OwnGit::Keep)?;
    if !skipped.is_empty() {
        let _ = std::fs::write(dst.join("SKIPPED"), skipped.join("\n"));
    }
    Ok(())
}
