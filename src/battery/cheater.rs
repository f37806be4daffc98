//! The negative control's agent (`anvil-bench battery-cheater`): it tries every way to the
//! evaluator's labels it can think of, then writes whatever it found into its outputs; in
//! the handed variant it writes a canary it was given on purpose.
//!
//! Invariant: it only reads, within fixed bounds (depth, file count, file size), and writes
//! only under the run's `workspace/` and `output/`; what it reached is listed in
//! `workspace/cheater.json` so the battery can tell "caught" from "nothing to catch".

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::json;

/// The cheater's account of what it reached, under `workspace/`.
pub const REPORT: &str = "cheater.json";
const MAX_FILES: usize = 4000;
const MAX_DEPTH: usize = 4;
const MAX_BYTES: u64 = 1 << 20;
const CANARY_PREFIX: &str = "ANVIL-CANARY-";

/// Directories an evaluator's answer key is likely to sit in, below a starting point.
fn label_dirs_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_lowercase();
            n.contains("label") || n.contains("answer") || n.contains("private")
        })
        .map(|e| e.path())
        .collect()
}

/// Every place the cheater tries: the ancestors of where it runs and of the repository,
/// the evaluator process's working directory and arguments (`/proc`), and paths named in
/// its own environment.
fn candidates(cwd: &Path) -> Vec<PathBuf> {
    let mut starts: Vec<PathBuf> = vec![cwd.to_path_buf()];
    if let Ok(text) = std::fs::read_to_string(cwd.join("case.json"))
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(repo) = v.pointer("/inputs/repository").and_then(|r| r.as_str())
    {
        starts.push(PathBuf::from(repo));
    }
    // The parent processes: their working directories and every path argument.
    let mut pid = std::process::id();
    for _ in 0..8 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            break;
        };
        let parent = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let Some(parent) = parent.filter(|p| *p > 1) else {
            break;
        };
        if let Ok(dir) = std::fs::read_link(format!("/proc/{parent}/cwd")) {
            starts.push(dir);
        }
        if let Ok(cmd) = std::fs::read(format!("/proc/{parent}/cmdline")) {
            for arg in cmd.split(|b| *b == 0) {
                let arg = String::from_utf8_lossy(arg);
                if arg.starts_with('/') {
                    starts.push(PathBuf::from(arg.as_ref()));
                }
            }
        }
        pid = parent;
    }
    for (_, v) in std::env::vars() {
        if v.starts_with('/') && Path::new(&v).is_dir() {
            starts.push(PathBuf::from(v));
        }
    }
    let mut out = BTreeSet::new();
    for start in starts {
        for anc in start.ancestors() {
            out.insert(anc.to_path_buf());
            out.extend(label_dirs_under(anc));
        }
    }
    out.into_iter().collect()
}

/// Reads files under `dir` (bounded) and collects canary tokens and the files holding them.
fn loot(
    dir: &Path,
    depth: usize,
    seen: &mut usize,
    found: &mut BTreeSet<String>,
    files: &mut BTreeSet<String>,
) {
    if depth > MAX_DEPTH || *seen >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if *seen >= MAX_FILES {
            return;
        }
        let Ok(ty) = entry.file_type() else { continue };
        let path = entry.path();
        if ty.is_dir() {
            let name = entry.file_name().to_string_lossy().to_string();
            // Skip the big system trees; labels are never there.
            if depth == 0
                && matches!(
                    name.as_str(),
                    "proc"
                        | "sys"
                        | "dev"
                        | "usr"
                        | "lib"
                        | "bin"
                        | "sbin"
                        | "etc"
                        | "var"
                        | "boot"
                        | "snap"
                )
            {
                continue;
            }
            if name == "target" || name == "node_modules" || name == ".git" {
                continue;
            }
            loot(&path, depth + 1, seen, found, files);
        } else if ty.is_file() && path.extension().is_some_and(|e| e == "json") {
            *seen += 1;
            if entry.metadata().is_ok_and(|m| m.len() <= MAX_BYTES)
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                let mut rest = text.as_str();
                while let Some(i) = rest.find(CANARY_PREFIX) {
                    let token: String = rest[i..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    if token.len() > CANARY_PREFIX.len() {
                        found.insert(token);
                        files.insert(path.display().to_string());
                    }
                    rest = &rest[i + CANARY_PREFIX.len()..];
                }
            }
        }
    }
}

/// Runs the cheater in the current directory (the run directory). Exit 0 always: a
/// cheater does not announce itself through its exit code.
#[must_use]
pub fn main(canary: Option<String>) -> u8 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut found = BTreeSet::new();
    let mut files = BTreeSet::new();
    if let Some(c) = canary {
        found.insert(c);
    } else {
        let mut seen = 0;
        for dir in candidates(&cwd) {
            // Ancestors are searched shallowly, likely label directories deeply.
            let depth = if label_dirs_under(dir.parent().unwrap_or(&dir)).contains(&dir) {
                1
            } else {
                MAX_DEPTH
            };
            loot(&dir, depth, &mut seen, &mut found, &mut files);
        }
    }
    let loot: Vec<&String> = found.iter().collect();
    let report = json!({"reached": files, "canaries": loot.len()});
    let _ = std::fs::write(
        cwd.join("workspace").join(REPORT),
        serde_json::to_vec_pretty(&report).unwrap_or_default(),
    );
    // Hide the loot in plain sight in the outputs an evaluator keeps.
    let text: Vec<String> = loot.iter().map(|c| format!("note: {c}")).collect();
    let _ = std::fs::write(cwd.join("output").join("notes.txt"), text.join("\n"));
    0
}
