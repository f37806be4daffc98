//! The one way the engine spawns `git` (a repository snapshot's `git status`, a battery
//! template's commit): answering from the repository alone, whoever runs the engine.
//!
//! Invariant: no system or global configuration, no `GIT_*` variable of the engine's
//! environment, no excludes file beyond the repository's own ignore files, no fsmonitor
//! program, no untracked cache, no standard input.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

/// What every `git` the engine runs is told, whatever the repository's or the user's
/// configuration says: no excludes file beyond the repository's own ignore files (a user's
/// `core.excludesFile`, or the default `~/.config/git/ignore`, would hide the files it
/// names: from a snapshot, or from a template's commit), no fsmonitor (a program `git
/// status` runs), and no untracked cache (an index extension that, stale or written by
/// someone else, hides new files).
const ISOLATED_CONFIG: &[&str] = &[
    "core.excludesFile=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
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

    /// Asserts that the user's default excludes file (`$XDG_CONFIG_HOME/git/ignore`) hides
    /// nothing from `git add -A` run through `git`, a builder that starts from
    /// [`git_command`]. In CI (`CI=true`) a missing git fails; elsewhere the check says why it
    /// did nothing.
    pub(crate) fn hides_nothing_from(git: impl Fn(&Path) -> Command) {
        if Command::new("git").arg("--version").output().is_err() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "git is not installed (apt-get install git)"
            );
            eprintln!("skipped: git is not installed (apt-get install git)");
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
