//! The one way the engine spawns `git` (a repository snapshot's `git status`, a battery
//! template's commit): answering from the repository alone, whoever runs the engine.
//!
//! Invariant: no system or global configuration, no `GIT_*` variable of the engine's
//! environment, no excludes file beyond the repository's own ignore files, no fsmonitor
//! program, no untracked cache, no hooks, no standard input.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

/// What every `git` the engine runs is told, whatever the repository's or the user's
/// configuration says: no excludes file beyond the repository's own ignore files (a user's
/// `core.excludesFile`, or the default `~/.config/git/ignore`, would hide the files it
/// names: from a snapshot, or from a template's commit), no fsmonitor (a program `git
/// status` runs), no untracked cache (an index extension that, stale or written by
/// someone else, hides new files), and no hooks (programs a commit runs, from wherever
/// `core.hooksPath` points).
const ISOLATED_CONFIG: &[&str] = &[
    "core.excludesFile=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.hooksPath=/dev/null",
];

/// `git -C dir`, isolated as the module says; the caller adds its own options and
/// arguments.
#[must_use]
pub fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    without_git_variables(&mut command, std::env::vars_os());
    command
        .arg("-C")
        .arg(dir)
        .args(ISOLATED_CONFIG.iter().flat_map(|c| ["-c", c]))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null());
    command
}

/// Removes from `command` every `GIT_*` variable of `environment` (`GIT_DIR`,
/// `GIT_INDEX_FILE`, `GIT_CONFIG_PARAMETERS`, …: each would redirect or configure it).
fn without_git_variables(
    command: &mut Command,
    environment: impl IntoIterator<Item = (OsString, OsString)>,
) {
    for (name, _) in environment {
        if name.as_encoded_bytes().starts_with(b"GIT_") {
            command.env_remove(name);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A `GIT_*` variable of the engine's environment is removed; any other is inherited.
    #[test]
    fn no_git_variable_of_the_engines_environment_reaches_git() {
        let mut command = Command::new("git");
        let environment = [("GIT_DIR", "/elsewhere/.git"), ("HOME", "/home/user")]
            .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        without_git_variables(&mut command, environment);
        let set: Vec<_> = command.get_envs().collect();
        assert_eq!(set, [(std::ffi::OsStr::new("GIT_DIR"), None)]);
    }

    /// The user's default excludes file hides nothing from `git add -A`.
    #[test]
    fn the_users_excludes_file_hides_nothing() {
        hides_nothing_from(git_command);
    }

    /// A repository's own `core.hooksPath` runs nothing: a commit through [`git_command`]
    /// leaves its post-commit hook unrun.
    #[test]
    fn the_repositorys_own_hooks_never_run() {
        if !git_installed() {
            return;
        }
        let repo = tempfile::tempdir().unwrap();
        let hooks = tempfile::tempdir().unwrap();
        let ran = hooks.path().join("ran");
        let hook = hooks.path().join("post-commit");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::write(repo.path().join("a.txt"), "a").unwrap();
        let hooks_path = format!("core.hooksPath={}", hooks.path().display());
        for args in [
            &["init", "-q"][..],
            &["config", "core.hooksPath", hooks.path().to_str().unwrap()],
            &["add", "-A"],
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "-m",
                "m",
            ],
        ] {
            let out = git_command(repo.path()).args(args).output().unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        }
        assert!(!ran.exists(), "the repository's post-commit hook ran");
        // The hook itself works: run with the repository's configuration, it runs.
        let out = Command::new("git")
            .arg("-C")
            .arg(repo.path())
            .args([
                "-c",
                &hooks_path,
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
            ])
            .args(["commit", "-q", "--allow-empty", "-m", "n"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(ran.exists(), "fixture: the hook does not run at all");
    }

    /// Whether git is installed: in CI (`CI=true`) a missing git fails; elsewhere the
    /// caller skips, saying why.
    fn git_installed() -> bool {
        if Command::new("git").arg("--version").output().is_ok() {
            return true;
        }
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "git is not installed (apt-get install git)"
        );
        eprintln!("skipped: git is not installed (apt-get install git)");
        false
    }

    /// Asserts that the user's default excludes file (`$XDG_CONFIG_HOME/git/ignore`) hides
    /// nothing from `git add -A` run through `git`, a builder that starts from
    /// [`git_command`]. In CI (`CI=true`) a missing git fails; elsewhere the check says why it
    /// did nothing.
    pub(crate) fn hides_nothing_from(git: impl Fn(&Path) -> Command) {
        if !git_installed() {
            return;
        }
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".config/git")).unwrap();
        std::fs::write(home.path().join(".config/git/ignore"), "*.swp\n").unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("notes.swp"), "x").unwrap();
        let run = |args: &[&str]| {
            let out = git(repo.path())
                .args(args)
                .env("HOME", home.path())
                .env("XDG_CONFIG_HOME", home.path().join(".config"))
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        run(&["init", "-q"]);
        run(&["add", "-A"]);
        assert_eq!(
            run(&["ls-files"]),
            "notes.swp\n",
            "the user's excludes file hid a file"
        );
    }
}
