//! Repository cleanliness: the state of the repository recorded before and after a run.
//!
//! Invariant: any change to the repository's files, its HEAD, its refs or its git
//! configuration and hooks between two snapshots is reported as a [`ContainmentViolation`]
//! naming the changed paths. A git work tree is read with `git status --porcelain`
//! (untracked files included, the content of every listed path hashed, so further edits to an
//! already dirty file still show); any other directory is walked and every file hashed.
//! Reading never writes: git runs with optional locks off, so the index is not refreshed.
//! It answers from the repository alone (its `git` is [`crate::repo::git_command`]): no
//! system or global configuration, no `GIT_*` variable of the engine's environment, no
//! excludes file beyond the repository's ignore files, no fsmonitor program, no untracked
//! cache. An index entry marked assume-unchanged
//! or skip-worktree, which `git status` never compares with the work tree, is recorded with
//! its path's content. A FIFO, socket or device is recorded by its kind and never read.
//! Files the repository's own ignore files name are not listed (their changes go unseen, as
//! `git status` leaves them out).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::{Deserialize, Serialize};

use crate::canon::canonical_hash;

/// The recorded state of a repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RepoSnapshot {
    /// A git work tree (the repository is its top level).
    #[serde(rename_all = "camelCase")]
    Git {
        /// `git rev-parse HEAD`; `None` before the first commit.
        head: Option<String>,
        /// `git status --porcelain` entries, untracked files included.
        status: Vec<StatusEntry>,
        /// Every ref and the object it names.
        refs: BTreeMap<String, String>,
        /// sha256 over `.git/config`, `.git/hooks/` and `.git/info/`.
        metadata_hash: String,
        /// The index entries `git status` does not compare with the work tree (marked
        /// assume-unchanged or skip-worktree), each with what its path holds; `.git/index`
        /// alone when the index cannot be read.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        unwatched: BTreeMap<String, String>,
    },
    /// Any other directory: every file's content hash.
    #[serde(rename_all = "camelCase")]
    Tree {
        /// sha256 over the sorted (path, hash) list.
        tree_hash: String,
        files: usize,
        #[serde(skip)]
        hashes: BTreeMap<String, String>,
    },
}

/// One line of `git status --porcelain`, with the content hash of its path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StatusEntry {
    /// The two-letter porcelain code (` M`, `??`, `R `, …).
    pub code: String,
    pub path: String,
    /// sha256 of the file as it is now; `deleted`, `dir`, `link:<target>` otherwise.
    pub content: String,
}

/// The repository changed while the agent ran. The CLI exits with its containment code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[error(
    "containment violation: the repository `{}` changed during the run: {}",
    repository.display(),
    changed.join(", ")
)]
pub struct ContainmentViolation {
    pub repository: PathBuf,
    /// Repository-relative paths that changed; `HEAD`, `refs/…` and `.git/config` name git
    /// state; `.git` means the repository stopped (or started) being a git work tree.
    pub changed: Vec<String>,
}

impl ContainmentViolation {
    #[must_use]
    pub fn kind(&self) -> &'static str {
        "containment_violation"
    }
}

/// Why a snapshot could not be taken.
#[derive(Debug, thiserror::Error)]
#[error("cannot record the state of the repository `{}`: {source}", path.display())]
pub struct SnapshotError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl RepoSnapshot {
    /// Records `repo`. Paths under `exclude` (e.g. a run directory that lives inside the
    /// repository) are left out, so the run's own writes are not mistaken for violations.
    ///
    /// # Errors
    ///
    /// [`SnapshotError`] when `repo` cannot be resolved (it does not exist) or, for a
    /// directory that is not a git work tree, a directory in it cannot be listed. A file
    /// that cannot be read is recorded as unreadable, not an error.
    pub fn capture(repo: &Path, exclude: &[PathBuf]) -> Result<RepoSnapshot, SnapshotError> {
        let err = |source| SnapshotError {
            path: repo.to_path_buf(),
            source,
        };
        let root = std::fs::canonicalize(repo).map_err(err)?;
        let excluded: Vec<String> = exclude
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .filter_map(|p| {
                p.strip_prefix(&root)
                    .ok()
                    .map(|r| r.to_string_lossy().into_owned())
            })
            .filter(|r| !r.is_empty())
            .collect();
        let skip = |rel: &str| {
            excluded
                .iter()
                .any(|e| rel == e || rel.starts_with(&format!("{e}/")))
        };
        if let Some(repo) = top_level(&root)
            && let Some(snapshot) = git_snapshot(&repo, &root, &skip)
        {
            return Ok(snapshot);
        }
        tree_snapshot(&root, &skip).map_err(err)
    }

    /// Every path that differs from `before`; empty when nothing changed.
    #[must_use]
    pub fn changes_since(&self, before: &RepoSnapshot) -> Vec<String> {
        match (before, self) {
            (
                RepoSnapshot::Git {
                    head: h0,
                    status: s0,
                    refs: r0,
                    metadata_hash: m0,
                    unwatched: u0,
                },
                RepoSnapshot::Git {
                    head: h1,
                    status: s1,
                    refs: r1,
                    metadata_hash: m1,
                    unwatched: u1,
                },
            ) => {
                let mut changed = Vec::new();
                if h0 != h1 {
                    changed.push("HEAD".to_string());
                }
                let index = |s: &[StatusEntry]| -> BTreeMap<String, (String, String)> {
                    s.iter()
                        .map(|e| (e.path.clone(), (e.code.clone(), e.content.clone())))
                        .collect()
                };
                changed.extend(diff_keys(&index(s0), &index(s1)));
                changed.extend(diff_keys(r0, r1));
                if m0 != m1 {
                    changed.push(".git/config".to_string());
                }
                // A path that gained or lost a mark leaves one list and joins the other.
                changed.extend(diff_keys(u0, u1));
                changed.sort();
                changed.dedup();
                changed
            }
            (RepoSnapshot::Tree { hashes: a, .. }, RepoSnapshot::Tree { hashes: b, .. }) => {
                diff_keys(a, b)
            }
            _ => vec![".git".to_string()],
        }
    }

    /// The violation between `before` and `self`, if anything changed.
    #[must_use]
    pub fn violation_since(
        &self,
        before: &RepoSnapshot,
        repository: &Path,
    ) -> Option<ContainmentViolation> {
        let changed = self.changes_since(before);
        (!changed.is_empty()).then(|| ContainmentViolation {
            repository: repository.to_path_buf(),
            changed,
        })
    }
}

fn diff_keys<V: PartialEq>(a: &BTreeMap<String, V>, b: &BTreeMap<String, V>) -> Vec<String> {
    let mut out: Vec<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    out.extend(b.keys().filter(|k| !a.contains_key(*k)).cloned());
    out.sort();
    out
}

/// `git args` on `repo`, read-only (optional locks off) and isolated
/// ([`crate::repo::git_command`]): its stdout when it succeeds.
fn git(repo: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = crate::repo::git_command(repo)
        .arg("--no-optional-locks")
        .args(args)
        .env("GIT_CEILING_DIRECTORIES", "")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// `root` opened as a git repository when it is the top level of a git work tree (a
/// directory nested in another repository is treated as a plain tree, as
/// [`crate::repo::revision`] does). Read in-process with `gix`, isolated from global
/// configuration: HEAD, refs and the git dir cost four `git` processes per snapshot.
fn top_level(root: &Path) -> Option<gix::Repository> {
    let repo = gix::open_opts(root, gix::open::Options::isolated()).ok()?;
    let top = std::fs::canonicalize(repo.workdir()?).ok()?;
    (top == root).then_some(repo)
}

/// Every ref (loose and packed, HEAD excepted) and the object it names; a symbolic ref
/// names the object its target names.
fn refs_of(repo: &gix::Repository) -> BTreeMap<String, String> {
    let Ok(platform) = repo.references() else {
        return BTreeMap::new();
    };
    let Ok(all) = platform.all() else {
        return BTreeMap::new();
    };
    all.filter_map(Result::ok)
        .map(|mut r| {
            let name = r.name().as_bstr().to_string();
            let id = match r.target().try_id() {
                Some(id) => id.to_string(),
                None => r
                    .follow_to_object()
                    .map_or_else(|e| format!("unresolved:{e}"), |id| id.to_string()),
            };
            (name, id)
        })
        .collect()
}

fn git_snapshot(
    repo: &gix::Repository,
    root: &Path,
    skip: &dyn Fn(&str) -> bool,
) -> Option<RepoSnapshot> {
    let head = repo.head_id().ok().map(|id| id.to_string());
    let raw = git(
        root,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=none",
        ],
    )?;
    let mut status = Vec::new();
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        if entry.len() < 4 {
            continue;
        }
        let code = String::from_utf8_lossy(&entry[..2]).into_owned();
        let path = String::from_utf8_lossy(&entry[3..]).into_owned();
        // A rename or copy is followed by its source path.
        if code.contains('R') || code.contains('C') {
            fields.next();
        }
        if skip(&path) {
            continue;
        }
        let content = content_of(&root.join(&path));
        status.push(StatusEntry {
            code,
            path,
            content,
        });
    }
    let refs = refs_of(repo);
    let git_dir = std::fs::canonicalize(repo.git_dir()).ok()?;
    let mut metadata = BTreeMap::new();
    metadata.insert("config".to_string(), content_of(&git_dir.join("config")));
    for sub in ["hooks", "info"] {
        let _ = walk(&git_dir.join(sub), &git_dir, &|_| false, &mut metadata);
    }
    Some(RepoSnapshot::Git {
        head,
        status,
        refs,
        metadata_hash: canonical_hash(&metadata),
        unwatched: unwatched(repo, root, skip),
    })
}

/// Every index entry marked assume-unchanged or skip-worktree (set by hand, or a sparse
/// checkout's), with what its path holds: `git status` never looks at such a path in the
/// work tree, so an edit behind the mark would otherwise go unseen. A path that is not a
/// plain relative one is recorded as `invalid-path` and not looked at; an index that exists
/// but cannot be read is one entry, `.git/index`.
fn unwatched(
    repo: &gix::Repository,
    root: &Path,
    skip: &dyn Fn(&str) -> bool,
) -> BTreeMap<String, String> {
    use gix::bstr::ByteSlice as _;
    use gix::index::entry::Flags;
    let mut out = BTreeMap::new();
    if std::fs::symlink_metadata(repo.index_path()).is_err() {
        return out;
    }
    let Ok(index) = repo.open_index() else {
        out.insert(".git/index".to_string(), "unreadable".to_string());
        return out;
    };
    for entry in index.entries() {
        if !entry
            .flags
            .intersects(Flags::ASSUME_VALID | Flags::SKIP_WORKTREE)
        {
            continue;
        }
        let path = entry.path(&index).to_str_lossy().into_owned();
        if skip(&path) {
            continue;
        }
        let plain = Path::new(&path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        let content = if plain && !path.is_empty() {
            content_of(&root.join(&path))
        } else {
            "invalid-path".to_string()
        };
        out.insert(path, content);
    }
    out
}

fn tree_snapshot(root: &Path, skip: &dyn Fn(&str) -> bool) -> io::Result<RepoSnapshot> {
    let mut hashes = BTreeMap::new();
    walk(root, root, skip, &mut hashes)?;
    Ok(RepoSnapshot::Tree {
        tree_hash: canonical_hash(&hashes),
        files: hashes.len(),
        hashes,
    })
}

/// What a path holds, as one comparable string: the hash of a regular file's content
/// (streamed, so a file of any size is read in bounded memory), `link:<target>` for a
/// symlink (never followed), `dir`, `special:<kind>` for a FIFO, a socket or a device
/// (never read: reading a FIFO waits for a writer that may never come), `deleted`, or
/// `unreadable:<why>`.
fn content_of(path: &Path) -> String {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return "deleted".into();
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        match std::fs::read_link(path) {
            Ok(target) => format!("link:{}", target.display()),
            Err(e) => format!("unreadable:{}", e.kind()),
        }
    } else if kind.is_dir() {
        "dir".into()
    } else if kind.is_file() {
        crate::fsio::hash_regular(path).unwrap_or_else(|e| format!("unreadable:{}", e.kind()))
    } else if kind.is_fifo() {
        "special:fifo".into()
    } else if kind.is_socket() {
        "special:socket".into()
    } else if kind.is_char_device() {
        "special:char-device".into()
    } else {
        "special:block-device".into()
    }
}

/// Records every entry under `dir` (relative to `base`) without following symlinks.
/// Empty directories are recorded too, so creating one is a change.
fn walk(
    dir: &Path,
    base: &Path,
    skip: &dyn Fn(&str) -> bool,
    out: &mut BTreeMap<String, String>,
) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let rel = path
            .strip_prefix(base)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_default();
        if skip(&rel) {
            continue;
        }
        let content = content_of(&path);
        let is_dir = content == "dir";
        out.insert(rel, content);
        if is_dir {
            walk(&path, base, skip, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::bytes_hash;
    use std::process::Command;

    fn run_git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?} failed in {}", dir.display());
    }

    fn git_repo() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        std::fs::write(root.join("b.txt"), "two\n").unwrap();
        std::fs::write(root.join("c.txt"), "three\n").unwrap();
        run_git(root, &["init", "-q"]);
        run_git(root, &["add", "."]);
        run_git(root, &["commit", "-q", "-m", "first"]);
        tmp
    }

    fn changes(root: &Path, exclude: &[PathBuf], act: impl FnOnce(&Path)) -> Vec<String> {
        let before = RepoSnapshot::capture(root, exclude).unwrap();
        act(root);
        RepoSnapshot::capture(root, exclude)
            .unwrap()
            .changes_since(&before)
    }

    /// Every kind of change to a git work tree is named, and nothing is named when nothing
    /// changed: a file edited, edited again while already dirty, deleted, renamed, a new
    /// untracked file, a commit, a new branch, the config, a hook.
    #[test]
    fn every_change_to_a_git_work_tree_is_named() {
        let repo = git_repo();
        let root = &std::fs::canonicalize(repo.path()).unwrap();
        assert!(matches!(
            RepoSnapshot::capture(root, &[]).unwrap(),
            RepoSnapshot::Git { head: Some(_), .. }
        ));
        assert_eq!(changes(root, &[], |_| {}), Vec::<String>::new());
        let edit = |r: &Path| std::fs::write(r.join("a.txt"), "changed\n").unwrap();
        assert_eq!(changes(root, &[], edit), ["a.txt"]);
        let again = |r: &Path| std::fs::write(r.join("a.txt"), "changed again\n").unwrap();
        assert_eq!(changes(root, &[], again), ["a.txt"]);
        let deleted = |r: &Path| std::fs::remove_file(r.join("b.txt")).unwrap();
        assert_eq!(changes(root, &[], deleted), ["b.txt"]);
        let untracked = |r: &Path| std::fs::write(r.join("new.txt"), "x").unwrap();
        assert_eq!(changes(root, &[], untracked), ["new.txt"]);
        // A one-letter path: the shortest porcelain entry (`?? x`).
        let short = |r: &Path| std::fs::write(r.join("x"), "x").unwrap();
        assert_eq!(changes(root, &[], short), ["x"]);
        // A rename's entry is followed by its source path, which is not an entry.
        let renamed = |r: &Path| run_git(r, &["mv", "c.txt", "moved.txt"]);
        assert_eq!(changes(root, &[], renamed), ["moved.txt"]);
        let commit = |r: &Path| run_git(r, &["commit", "-q", "-am", "second"]);
        let committed = changes(root, &[], commit);
        assert!(committed.contains(&"HEAD".to_string()), "{committed:?}");
        assert!(
            committed.contains(&"refs/heads/main".to_string()),
            "{committed:?}"
        );
        let branch = |r: &Path| run_git(r, &["branch", "other"]);
        assert_eq!(changes(root, &[], branch), ["refs/heads/other"]);
        let config = |r: &Path| run_git(r, &["config", "core.hooksPath", "/tmp"]);
        assert_eq!(changes(root, &[], config), [".git/config"]);
        let hook =
            |r: &Path| std::fs::write(r.join(".git/hooks/post-checkout"), "#!/bin/sh\n").unwrap();
        assert_eq!(changes(root, &[], hook), [".git/config"]);
    }

    /// A snapshot answers from the repository alone: an excludes file named in its
    /// configuration hides nothing, and its fsmonitor program is never run.
    #[test]
    fn a_snapshot_neither_honours_an_excludes_file_nor_runs_an_fsmonitor() {
        let repo = git_repo();
        let root = &std::fs::canonicalize(repo.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let excludes = outside.path().join("ignore");
        std::fs::write(&excludes, "*.swp\n").unwrap();
        let marker = outside.path().join("fsmonitor-ran");
        run_git(
            root,
            &["config", "core.excludesFile", excludes.to_str().unwrap()],
        );
        run_git(
            root,
            &[
                "config",
                "core.fsmonitor",
                &format!("touch {}; echo", marker.display()),
            ],
        );
        let swp = |r: &Path| std::fs::write(r.join("notes.swp"), "x").unwrap();
        assert_eq!(changes(root, &[], swp), ["notes.swp"]);
        assert!(
            !marker.exists(),
            "a snapshot ran the repository's fsmonitor"
        );
    }

    /// A FIFO, in a plain tree or in place of a tracked file, is named as a change and never
    /// read (a read would wait for a writer forever); a regular file's hash is its bytes'.
    #[test]
    fn a_fifo_is_a_change_and_is_never_read() {
        use crate::fsio::mkfifo as fifo;
        let repo = git_repo();
        let root = &std::fs::canonicalize(repo.path()).unwrap();
        let replaced = |r: &Path| {
            std::fs::remove_file(r.join("a.txt")).unwrap();
            fifo(&r.join("a.txt"));
        };
        assert_eq!(changes(root, &[], replaced), ["a.txt"]);
        assert_eq!(content_of(&root.join("a.txt")), "special:fifo");
        let tmp = tempfile::tempdir().unwrap();
        let plain = &std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::write(plain.join("f"), "bytes").unwrap();
        assert_eq!(content_of(&plain.join("f")), bytes_hash(b"bytes"));
        let added = |r: &Path| fifo(&r.join("pipe"));
        assert_eq!(changes(plain, &[], added), ["pipe"]);
    }

    /// An edit behind an assume-unchanged or skip-worktree mark, which `git status` never
    /// looks at, is named; so are setting and clearing the mark, and an index that cannot be
    /// read.
    #[test]
    fn an_edit_behind_an_index_mark_is_named() {
        let repo = git_repo();
        let root = &std::fs::canonicalize(repo.path()).unwrap();
        let mark = |r: &Path| {
            run_git(r, &["update-index", "--skip-worktree", "a.txt"]);
            run_git(r, &["update-index", "--assume-unchanged", "b.txt"]);
        };
        assert_eq!(changes(root, &[], mark), ["a.txt", "b.txt"]);
        let edit = |r: &Path| {
            std::fs::write(r.join("a.txt"), "behind the mark\n").unwrap();
            std::fs::write(r.join("b.txt"), "behind the mark\n").unwrap();
        };
        assert_eq!(changes(root, &[], edit), ["a.txt", "b.txt"]);
        let unmark = |r: &Path| run_git(r, &["update-index", "--no-skip-worktree", "a.txt"]);
        assert_eq!(changes(root, &[], unmark), ["a.txt"]);
        // git itself refuses it, so the work tree is walked as a plain one instead: `.git`.
        let garbage = |r: &Path| std::fs::write(r.join(".git/index"), "not an index").unwrap();
        assert_eq!(changes(root, &[], garbage), [".git"]);
    }

    /// A run directory inside the repository is left out; a repository that stops being a
    /// git work tree is one change, `.git`.
    #[test]
    fn an_excluded_directory_is_left_out_and_losing_git_is_a_change() {
        let repo = git_repo();
        let root = &std::fs::canonicalize(repo.path()).unwrap();
        std::fs::create_dir(root.join("runs")).unwrap();
        let runs = [root.join("runs")];
        let inside = |r: &Path| std::fs::write(r.join("runs/out.json"), "{}").unwrap();
        assert_eq!(changes(root, &runs, inside), Vec::<String>::new());
        let beside = |r: &Path| std::fs::write(r.join("runs.txt"), "x").unwrap();
        assert_eq!(changes(root, &runs, beside), ["runs.txt"]);
        let lost = |r: &Path| std::fs::remove_dir_all(r.join(".git")).unwrap();
        assert_eq!(changes(root, &runs, lost), [".git"]);
    }

    /// A plain directory is walked: edits, new files, new empty directories, deletions and
    /// a symlink's new target are named; the walk never follows a link.
    #[test]
    fn every_change_to_a_plain_tree_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let root = &std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/f.txt"), "one").unwrap();
        std::os::unix::fs::symlink("d/f.txt", root.join("link")).unwrap();
        let snapshot = RepoSnapshot::capture(root, &[]).unwrap();
        assert!(
            matches!(&snapshot, RepoSnapshot::Tree { files: 3, hashes, .. }
                if hashes.get("d") == Some(&"dir".to_string())
                    && hashes.get("link") == Some(&"link:d/f.txt".to_string())
                    && hashes.get("d/f.txt") == Some(&bytes_hash(b"one"))),
            "{snapshot:?}"
        );
        assert_eq!(changes(root, &[], |_| {}), Vec::<String>::new());
        let edit = |r: &Path| std::fs::write(r.join("d/f.txt"), "two").unwrap();
        assert_eq!(changes(root, &[], edit), ["d/f.txt"]);
        let empty = |r: &Path| std::fs::create_dir(r.join("e")).unwrap();
        assert_eq!(changes(root, &[], empty), ["e"]);
        let relink = |r: &Path| {
            std::fs::remove_file(r.join("link")).unwrap();
            std::os::unix::fs::symlink("elsewhere", r.join("link")).unwrap();
        };
        assert_eq!(changes(root, &[], relink), ["link"]);
        // A run directory inside a plain tree is left out too, its own entry included.
        let runs = [root.join("d")];
        let inside = |r: &Path| std::fs::write(r.join("d/out.json"), "{}").unwrap();
        assert_eq!(changes(root, &runs, inside), Vec::<String>::new());
        let gone = |r: &Path| std::fs::remove_dir_all(r.join("d")).unwrap();
        assert_eq!(changes(root, &[], gone), ["d", "d/f.txt", "d/out.json"]);
    }

    #[test]
    fn a_violation_is_named_only_when_something_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let before = RepoSnapshot::capture(tmp.path(), &[]).unwrap();
        assert_eq!(before.violation_since(&before, tmp.path()), None);
        std::fs::write(tmp.path().join("x"), "x").unwrap();
        let after = RepoSnapshot::capture(tmp.path(), &[]).unwrap();
        let v = after.violation_since(&before, tmp.path()).unwrap();
        assert_eq!(
            (v.kind(), v.changed),
            ("containment_violation", vec!["x".to_string()])
        );
        assert!(RepoSnapshot::capture(&tmp.path().join("missing"), &[]).is_err());
    }
}
