//! A scenario template's first commit, made in-process: what `git init`, `git add -A` and
//! `git commit` make of a directory of plain files, without their three `git` processes
//! per scenario (the default battery prepares 45 templates before its first trial).
//!
//! Invariant: the repository written here is one git reads as it reads its own — the same
//! commit id as `git commit` with the battery's fixed identity and date, an index that
//! `git status` finds clean, HEAD on `main`. Whatever git would treat specially (ignore
//! and attribute files, submodules, a nested `.git`, names git refuses or protects, a
//! name that is not UTF-8, an empty tree) is left to git itself: [`commit`] answers
//! [`Outcome::NeedsGit`] and changes nothing.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use gix::objs::Write as _;

/// The template commit's author and committer, date and message: the same scenario always
/// commits to the same revision, so a resumed or repeated battery sees the same
/// `sourceRevision`, whether git (with these in its environment) or [`commit`] makes it.
pub(super) const IDENTITY: (&str, &str) = ("anvil-bench", "battery@anvil-bench.invalid");
pub(super) const DATE: &str = "2000-01-01T00:00:00Z";
pub(super) const MESSAGE: &str = "scenario repository";
/// [`DATE`] in seconds.
const DATE_SECONDS: i64 = 946_684_800;

/// A larger file is left to git, which streams it rather than holding it whole.
const LARGEST_FILE: u64 = 64 << 20;

/// What [`commit`] did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The directory is now a git repository whose HEAD commits every file in it.
    Committed,
    /// Left untouched: the tree holds something only git itself should interpret.
    NeedsGit(String),
}

/// One regular file of the tree.
struct File {
    /// `/`-separated, relative to the root.
    path: String,
    meta: std::fs::Metadata,
}

impl File {
    /// The mode git records: executable when the owner may execute it (core.filemode).
    fn mode(&self) -> u32 {
        if self.meta.mode() & 0o100 != 0 {
            0o100_755
        } else {
            0o100_644
        }
    }
}

/// Commits the plain files under `root` (directories and regular files only: the template
/// copy refused anything else) as the first commit of a new repository at `root`.
///
/// # Errors
///
/// An I/O error listing or reading the tree or writing the repository; a repository left
/// half written is the caller's to remove (the template directory is discarded).
pub(super) fn commit(root: &Path) -> io::Result<Outcome> {
    let files = match plain_files(root)? {
        Ok(files) => files,
        Err(reason) => return Ok(Outcome::NeedsGit(reason)),
    };
    if files.is_empty() {
        // `git commit` refuses an empty tree: its error is the one to report.
        return Ok(Outcome::NeedsGit("no file to commit".into()));
    }
    let git = root.join(".git");
    for dir in ["objects/info", "objects/pack", "refs/heads", "refs/tags"] {
        std::fs::create_dir_all(git.join(dir))?;
    }
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n")?;
    std::fs::write(
        git.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
    )?;
    let repo = gix::open_opts(root, gix::open::Options::isolated()).map_err(io::Error::other)?;
    let mut ids = Vec::with_capacity(files.len());
    for file in &files {
        // Never through a symlink, never past the size listed.
        let bytes = crate::fsio::read_regular(&root.join(&file.path), LARGEST_FILE)?;
        if bytes.len() as u64 != file.meta.len() {
            return Err(io::Error::other(format!(
                "`{}` changed while it was committed",
                file.path
            )));
        }
        ids.push(write(&repo, gix::objs::Kind::Blob, &bytes)?);
    }
    let tree = write_tree(&repo, &files, &ids, "")?;
    let commit = write(&repo, gix::objs::Kind::Commit, &commit_object(&tree))?;
    std::fs::write(git.join("index"), index(&files, &ids)?)?;
    std::fs::write(git.join("refs/heads/main"), format!("{commit}\n"))?;
    Ok(Outcome::Committed)
}

fn write(repo: &gix::Repository, kind: gix::objs::Kind, bytes: &[u8]) -> io::Result<gix::ObjectId> {
    repo.objects
        .write_buf(kind, bytes)
        .map_err(|e| io::Error::other(e.to_string()))
}

/// Every regular file under `root`, sorted by path as git's index sorts (bytewise), or why
/// the tree is git's to interpret.
fn plain_files(root: &Path) -> io::Result<Result<Vec<File>, String>> {
    let mut files = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                return Ok(Err(format!("a name in `{prefix}` is not UTF-8")));
            };
            if let Some(reason) = special_to_git(name) {
                return Ok(Err(format!("`{prefix}{name}` {reason}")));
            }
            let meta = std::fs::symlink_metadata(entry.path())?;
            let path = format!("{prefix}{name}");
            if meta.is_dir() {
                stack.push((entry.path(), format!("{path}/")));
            } else if meta.is_file() && meta.len() > LARGEST_FILE {
                return Ok(Err(format!("`{path}` is over {LARGEST_FILE} bytes")));
            } else if meta.is_file() {
                files.push(File { path, meta });
            } else {
                return Ok(Err(format!("`{path}` is not a regular file or directory")));
            }
        }
    }
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Ok(Ok(files))
}

/// Why git would treat an entry named `name` specially, if it would: ignore, attribute and
/// submodule files change what `git add` records; `.git` and the names git protects on
/// other file systems (`.GIT`, `git~1`, trailing dots and spaces) it refuses or rewrites;
/// control characters and backslashes are left to it too.
fn special_to_git(name: &str) -> Option<&'static str> {
    let folded = name.trim_end_matches(['.', ' ']).to_ascii_lowercase();
    if folded.starts_with(".git") || folded.starts_with("git~") {
        return Some("is a name git interprets (ignore, attributes, submodules or its own)");
    }
    if name.chars().any(|c| c.is_control() || c == '\\') {
        return Some("holds a character git may treat specially");
    }
    None
}

/// The mode git records for a directory.
const TREE_MODE: u32 = 0o40_000;

/// Writes the tree of the files under `prefix` (`""` or `dir/`) and returns its id.
/// `files` is sorted by path; a directory's files are contiguous in it.
fn write_tree(
    repo: &gix::Repository,
    files: &[File],
    ids: &[gix::ObjectId],
    prefix: &str,
) -> io::Result<gix::ObjectId> {
    // (mode, name, id).
    let mut entries: Vec<(u32, &str, gix::ObjectId)> = Vec::new();
    let mut i = 0;
    while i < files.len() {
        let rest = &files[i].path[prefix.len()..];
        match rest.split_once('/') {
            None => {
                entries.push((files[i].mode(), rest, ids[i]));
                i += 1;
            }
            Some((dir, _)) => {
                let sub = format!("{prefix}{dir}/");
                let end = i + files[i..]
                    .iter()
                    .take_while(|f| f.path.starts_with(&sub))
                    .count();
                let id = write_tree(repo, &files[i..end], &ids[i..end], &sub)?;
                entries.push((TREE_MODE, dir, id));
                i = end;
            }
        }
    }
    // Git's order: a directory sorts as if its name ended in `/`.
    fn key(mode: u32, name: &str) -> impl Iterator<Item = u8> + '_ {
        let slash: &'static [u8] = if mode == TREE_MODE { b"/" } else { b"" };
        name.bytes().chain(slash.iter().copied())
    }
    entries.sort_by(|a, b| key(a.0, a.1).cmp(key(b.0, b.1)));
    let mut bytes = Vec::new();
    for (mode, name, id) in &entries {
        bytes.extend_from_slice(format!("{mode:o} ").as_bytes());
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
    }
    write(repo, gix::objs::Kind::Tree, &bytes)
}

/// The commit object `git commit -m` writes with the battery's identity and date.
fn commit_object(tree: &gix::ObjectId) -> Vec<u8> {
    let (name, email) = IDENTITY;
    let who = format!("{name} <{email}> {DATE_SECONDS} +0000");
    format!("tree {tree}\nauthor {who}\ncommitter {who}\n\n{MESSAGE}\n").into_bytes()
}

/// A version 2 index holding every file at stage 0 with its stat data, as `git add` leaves
/// it (no extensions), with its SHA-1 trailer.
fn index(files: &[File], ids: &[gix::ObjectId]) -> io::Result<Vec<u8>> {
    // Stat fields are 32 bits in the index: git stores their low bits.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn low(v: i64) -> [u8; 4] {
        (v as u32).to_be_bytes()
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&u32::try_from(files.len()).unwrap_or(u32::MAX).to_be_bytes());
    for (file, id) in files.iter().zip(ids) {
        let start = out.len();
        let m = &file.meta;
        for v in [m.ctime(), m.ctime_nsec(), m.mtime(), m.mtime_nsec()] {
            out.extend_from_slice(&low(v));
        }
        #[allow(clippy::cast_possible_wrap)]
        for v in [m.dev() as i64, m.ino() as i64] {
            out.extend_from_slice(&low(v));
        }
        out.extend_from_slice(&file.mode().to_be_bytes());
        out.extend_from_slice(&m.uid().to_be_bytes());
        out.extend_from_slice(&m.gid().to_be_bytes());
        #[allow(clippy::cast_possible_wrap)]
        out.extend_from_slice(&low(m.len() as i64));
        out.extend_from_slice(id.as_bytes());
        let name_len = u16::try_from(file.path.len().min(0xfff)).unwrap_or(0xfff);
        out.extend_from_slice(&name_len.to_be_bytes());
        out.extend_from_slice(file.path.as_bytes());
        // NUL-padded to a multiple of eight, with at least one NUL.
        let padded = (out.len() - start + 8) & !7;
        out.resize(start + padded, 0);
    }
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(&out);
    // An error is a SHA-1 collision attack detected in the index's own bytes.
    let sum = hasher
        .try_finalize()
        .map_err(|e| io::Error::other(e.to_string()))?;
    out.extend_from_slice(sum.as_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests;
