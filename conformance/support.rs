//! Temp worlds for trials: a repository, an AIR, a cases directory, and the CLI.
//! Each trial builds its own world; nothing is shared between trials.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anvil_bench::case::{OpenMode, OpenRequest, Opened, open};
use libtest_mimic::Failed;

/// Fails the trial with a message unless `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+).into());
        }
    };
}

pub const UNIT_TARGET: &str = "op.create_payment.input.body.capture_timeout";
pub const EMAIL_TARGET: &str = "op.create_payment.input.body.customer_email";

pub struct World {
    pub dir: tempfile::TempDir,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

impl World {
    /// The bundled payments example, copied into a fresh temp directory.
    pub fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/payments");
        copy_tree(&example, dir.path());
        World { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }
    pub fn air(&self) -> PathBuf {
        self.root().join("air.json")
    }
    pub fn repo(&self) -> PathBuf {
        self.root().join("repo")
    }
    pub fn cases(&self) -> PathBuf {
        self.root().join("cases")
    }

    pub fn request(&self, skill: &str, target: &str) -> OpenRequest {
        OpenRequest {
            air: self.air(),
            repo: self.repo(),
            skill: skill.into(),
            target: target.into(),
            deficiency: None,
            cases_dir: self.cases(),
            executor: "conformance".into(),
            scopes: vec![],
            mode: OpenMode::New,
        }
    }

    /// Opens the unit case on the example.
    pub fn open_unit(&self) -> Result<Opened, Failed> {
        open(&self.request("annotate-unit", UNIT_TARGET)).map_err(|e| Failed::from(e.to_string()))
    }

    /// Rewrites the AIR through `edit` on its JSON value.
    pub fn edit_air(&self, edit: impl FnOnce(&mut serde_json::Value)) {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(self.air()).unwrap()).unwrap();
        edit(&mut v);
        std::fs::write(self.air(), serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    /// Makes the repository a git work tree with one commit.
    pub fn git_init(&self) {
        let repo = self.repo();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "initial"]);
    }

    pub fn cli(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
            .args(args)
            .current_dir(self.root())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

pub fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Every file under `dir` (relative path → sha256 of its bytes; directories as "dir").
pub fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(base).unwrap().to_path_buf();
            if path.is_dir() {
                out.insert(rel, "dir".into());
                walk(base, &path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.insert(rel, anvil_bench::canon::bytes_hash(&bytes));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}
