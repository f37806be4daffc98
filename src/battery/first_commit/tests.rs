use super::*;
use std::process::Command;

use proptest::prelude::*;

/// Whether `git` can run here. In CI (`CI=true`) a missing git fails the test; on a
/// developer machine the test says why it did nothing.
fn git_available(test: &str) -> bool {
    let found = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: git is not installed (apt-get install git)"
        );
        eprintln!("{test}: skipped, git is not installed (apt-get install git)");
    }
    found
}

/// `git` in `dir` as the battery runs it; its output.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = super::super::workspace::git_command(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The battery's `git` starts from the engine's isolated one: the user's excludes file
/// leaves nothing out of a scenario's commit.
#[test]
fn the_users_excludes_file_leaves_nothing_out_of_a_commit() {
    crate::repo::hides_nothing_from(super::super::workspace::git_command);
}

/// `files` (path, bytes, executable) written under a new directory.
fn tree(files: &[(String, Vec<u8>, bool)]) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes, executable) in files {
        let at = dir.path().join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(&at, bytes).unwrap();
        let mode = if *executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(mode)).unwrap();
        // An hour old: an entry as new as the index is "racily clean" and git would
        // re-read it whatever the index's stat data says.
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&at)
            .unwrap()
            .set_modified(past)
            .unwrap();
    }
    dir
}

/// Commits `files` both ways and checks git reads ours as its own: the same HEAD commit,
/// the same index entries, a clean status, and a repository `git fsck` accepts.
fn same_as_git(files: &[(String, Vec<u8>, bool)]) {
    let ours = tree(files);
    let theirs = tree(files);
    assert_eq!(commit(ours.path()).unwrap(), Outcome::Committed);
    git(theirs.path(), &["init", "-q", "--template="]);
    git(theirs.path(), &["add", "-A"]);
    git(
        theirs.path(),
        &["commit", "-q", "--no-verify", "-m", MESSAGE],
    );
    for args in [
        // First: plumbing that trusts the index's stat data (`status` would refresh it).
        &["diff-files", "--name-status"][..],
        &["rev-parse", "HEAD"],
        &["symbolic-ref", "HEAD"],
        &["ls-files", "-s"],
        &["status", "--porcelain=v1", "--untracked-files=all"],
    ] {
        assert_eq!(
            git(ours.path(), args),
            git(theirs.path(), args),
            "git {args:?} over {:?}",
            files.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
    }
    assert_eq!(git(ours.path(), &["status", "--porcelain=v1"]), "");
    git(ours.path(), &["fsck", "--strict", "--no-dangling"]);
}

fn file(path: &str, bytes: &str) -> (String, Vec<u8>, bool) {
    (path.to_string(), bytes.as_bytes().to_vec(), false)
}

/// Names whose order differs between a bytewise sort of paths (the index) and git's tree
/// order (a directory sorts as `name/`), nesting, an empty file, an executable one and a
/// non-ASCII name: the commit is the one git makes.
#[test]
fn the_first_commit_is_the_one_git_makes() {
    if !git_available("the_first_commit_is_the_one_git_makes") {
        return;
    }
    let mut files = vec![
        file("a", "file a\n"),
        file("a-b", "dash\n"),
        file("a.b", "dot\n"),
        file("a/x", "in a\n"),
        file("a/y/z.py", "deep\n"),
        file("a0", "zero\n"),
        file("B", "upper\n"),
        file("empty", ""),
        file("été/ü.md", "non-ascii\n"),
        file("40000", "a name like a mode\n"),
    ];
    files.push(("run.sh".into(), b"#!/bin/sh\n".to_vec(), true));
    // `a` is a file and `a/` a directory cannot both exist: keep the directory.
    files.retain(|f| f.0 != "a");
    same_as_git(&files);
}

/// What git interprets (ignore, attribute and submodule files, a nested repository, names
/// git protects, control characters, a name that is not UTF-8) and an empty tree are left
/// to git: nothing is written.
#[test]
fn what_git_interprets_is_left_to_git_untouched() {
    use std::os::unix::ffi::OsStrExt;
    let cases: Vec<Vec<(String, Vec<u8>, bool)>> = vec![
        vec![file("src/.gitignore", "*.log\n"), file("src/a.log", "x")],
        vec![file(".gitattributes", "* text=auto\n")],
        vec![file(".gitmodules", "")],
        vec![file("vendor/.git/HEAD", "ref: refs/heads/main\n")],
        vec![file(".GIT.", "x")],
        vec![file("GIT~1/x", "x")],
        vec![file("a\\b", "x")],
        vec![file("tab\there", "x")],
        vec![],
    ];
    for files in cases {
        let dir = tree(&files);
        let outcome = commit(dir.path()).unwrap();
        assert!(
            matches!(outcome, Outcome::NeedsGit(_)),
            "{files:?}: {outcome:?}"
        );
        assert!(!dir.path().join(".git").exists(), "{files:?}");
    }
    let dir = tree(&[file("ok", "x")]);
    std::fs::write(
        dir.path()
            .join(std::ffi::OsStr::from_bytes(b"not-utf8-\xff")),
        "x",
    )
    .unwrap();
    assert!(matches!(commit(dir.path()).unwrap(), Outcome::NeedsGit(_)));
    assert!(!dir.path().join(".git").exists());
}

/// A symlink or special file is never read through, and a file too large to hold is
/// streamed by git: both left to git (the template copy refuses links and special files
/// before this, so this is the second line).
#[test]
fn a_symlink_or_a_huge_file_is_left_to_git() {
    let dir = tree(&[file("ok", "x")]);
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
    assert!(matches!(commit(dir.path()).unwrap(), Outcome::NeedsGit(_)));
    assert!(!dir.path().join(".git").exists());
    let dir = tree(&[file("ok", "x")]);
    let huge = std::fs::File::create(dir.path().join("huge")).unwrap();
    huge.set_len(LARGEST_FILE + 1).unwrap();
    assert!(matches!(commit(dir.path()).unwrap(), Outcome::NeedsGit(_)));
    assert!(!dir.path().join(".git").exists());
}

fn name() -> impl Strategy<Value = String> {
    // The characters that decide order: `-` `.` `/`-adjacent, digits, cases, non-ASCII.
    proptest::string::string_regex("[a-b0A.\\-_é ]{1,4}")
        .unwrap()
        .prop_filter("a name git would leave to itself", |n| {
            special_to_git(n).is_none() && n != "." && n != ".."
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any tree of plain files with names from an alphabet that decides sort order commits
    /// to git's own commit.
    #[test]
    fn any_plain_tree_commits_as_git_commits_it(
        paths in proptest::collection::btree_set(
            proptest::collection::vec(name(), 1..4).prop_map(|p| p.join("/")),
            1..10,
        ),
        executable in proptest::collection::vec(any::<bool>(), 10),
    ) {
        if !git_available("any_plain_tree_commits_as_git_commits_it") {
            return Ok(());
        }
        // A path that is a prefix directory of another cannot also be a file.
        let paths: Vec<&String> = paths
            .iter()
            .filter(|p| !paths.iter().any(|q| q.starts_with(&format!("{p}/"))))
            .collect();
        let files: Vec<(String, Vec<u8>, bool)> = paths
            .iter()
            .zip(&executable)
            .map(|(p, x)| ((*p).clone(), format!("{p}\n").into_bytes(), *x))
            .collect();
        same_as_git(&files);
    }
}
