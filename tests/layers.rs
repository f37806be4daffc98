//! The shape of the library, read from its own `use crate::…` / `super::…` paths:
//!
//! * every top-level module may import only the modules listed below it in [`LAYERS`]
//!   (no arrow runs back up, so no two modules import each other);
//! * no two files import each other, directly or round a longer loop (no circles), except
//!   a folder's `mod.rs`, which declares its files and hands their names on;
//! * exit codes are the CLI's: only `src/cli/` and `src/main.rs` name them.
//!
//! Test code (`#[cfg(test)]` to the end of a file, files named `tests.rs`) and comments are
//! not read: what a test or a doc link names is no dependency of the library.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's modules from the ground up. A module may import only those before it.
const LAYERS: &[&str] = &[
    "par",
    "memo",
    "canon",
    "fsio",
    "outpath",
    "limits",
    "json_path",
    "repo",
    "skill",
    "air",
    "case",
    "tools",
    "reconcile",
    "process",
    "sandbox",
    "driver",
    "mcp",
    "demo",
    "investigator",
    "replay",
    "battery",
    "report",
    "cli",
];

/// One source file of the library: its module path (`["case", "rail"]`) and its code with
/// comments and test code removed.
struct SourceFile {
    rel: String,
    module: Vec<String>,
    is_face: bool,
    code: String,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn read_sources() -> Vec<SourceFile> {
    let root = src_dir();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "tests") {
                    stack.push(path);
                }
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".rs") || name == "tests.rs" {
                continue;
            }
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            out.push(SourceFile {
                module: module_of(&rel),
                is_face: name == "mod.rs" || name == "lib.rs" || name == "main.rs",
                code: strip(&text),
                rel,
            });
        }
    }
    out
}

/// `case/rail.rs` → `[case, rail]`; `case/mod.rs` → `[case]`; `lib.rs` → `[]`.
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The code without comments, string literals' contents, and the test module at the end.
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let mut in_str = false;
        let mut prev = '\0';
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if in_str {
                if c == '"' && prev != '\\' {
                    in_str = false;
                    out.push('"');
                }
                prev = if c == '\\' && prev == '\\' { '\0' } else { c };
                continue;
            }
            if c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            if c == '"' {
                in_str = true;
                prev = '\0';
            }
            out.push(c);
        }
        out.push('\n');
    }
    out
}

/// Every path the code names that starts with `crate`, `super` or `self`, with `use` trees
/// (`use super::{a, b::C}`) flattened.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        if starts_word && is_word_at(&bytes, i, "use") {
            let end = bytes[i..]
                .iter()
                .position(|&c| c == ';')
                .map_or(bytes.len(), |p| i + p);
            let tree: String = bytes[i + 3..end].iter().collect();
            flatten(&compact(&tree), &mut Vec::new(), &mut out);
            i = end;
            continue;
        }
        if starts_word
            && let Some(word) = ["crate::", "super::", "self::"]
                .iter()
                .find(|w| bytes[i..].starts_with(&w.chars().collect::<Vec<_>>()))
        {
            let mut j = i + word.len();
            let mut segs = vec![word.trim_end_matches("::").to_string()];
            loop {
                let start = j;
                while j < bytes.len() && (bytes[j].is_alphanumeric() || bytes[j] == '_') {
                    j += 1;
                }
                if j == start {
                    break;
                }
                segs.push(bytes[start..j].iter().collect());
                if bytes.get(j) == Some(&':') && bytes.get(j + 1) == Some(&':') {
                    j += 2;
                } else {
                    break;
                }
            }
            out.push(segs);
            i = j;
            continue;
        }
        i += 1;
    }
    out.retain(|p| matches!(p[0].as_str(), "crate" | "super" | "self"));
    out
}

fn is_word_at(chars: &[char], i: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    chars[i..].starts_with(&w)
        && chars
            .get(i + w.len())
            .is_some_and(|c| c.is_whitespace() || *c == ':' || *c == '{')
}

/// A use tree without whitespace and without renames (`a as b` is `a`).
fn compact(tree: &str) -> String {
    let mut out = String::new();
    let mut words = tree.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if w == "as" {
            // The new name, up to the next `,` or `}` that may follow it in the same word.
            if let Some(name) = words.next() {
                out.extend(
                    name.chars()
                        .skip_while(|c| c.is_alphanumeric() || *c == '_'),
                );
            }
            continue;
        }
        out.push_str(w);
    }
    out
}

/// Flattens one use tree (whitespace removed) into paths under `prefix`.
fn flatten(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let n = prefix.len();
        prefix.extend(head);
        for part in split_top(inner) {
            flatten(part, prefix, out);
        }
        prefix.truncate(n);
    } else {
        let mut path = prefix.clone();
        path.extend(
            tree.split("::")
                .filter(|s| !s.is_empty() && *s != "*")
                .map(str::to_string),
        );
        if !path.is_empty() {
            out.push(path);
        }
    }
}

/// Splits `a,b::{c,d},e` at its top-level commas.
fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// The absolute module path a relative one names from `file`.
fn absolute(file: &SourceFile, path: &[String]) -> Option<Vec<String>> {
    // The module whose items `self` names: a face's own module, else the file's module.
    let mut base = file.module.clone();
    let mut rest = path;
    match path.first()?.as_str() {
        "crate" => {
            base.clear();
            rest = &path[1..];
        }
        "self" => rest = &path[1..],
        "super" => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The file that defines the longest prefix of `path`, following a face's `pub use`.
fn resolve(
    path: &[String],
    files: &BTreeMap<Vec<String>, usize>,
    reexports: &BTreeMap<Vec<String>, Vec<String>>,
    depth: usize,
) -> Option<usize> {
    for n in (1..=path.len()).rev() {
        if let Some(&idx) = files.get(&path[..n]) {
            if n < path.len() && depth < 8 {
                let named = path[..=n].to_vec();
                if let Some(target) = reexports.get(&named) {
                    let mut full = target.clone();
                    full.extend(path[n + 1..].iter().cloned());
                    return resolve(&full, files, reexports, depth + 1).or(Some(idx));
                }
            }
            return Some(idx);
        }
    }
    None
}

struct Graph {
    files: Vec<SourceFile>,
    /// (from, to, the path as written) for every reference between two files.
    edges: Vec<(usize, usize, String)>,
}

fn graph() -> Graph {
    let files = read_sources();
    let by_module: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.clone(), i))
        .collect();
    // A face's `pub use x::Name;` makes `face::Name` mean `face::x::Name`.
    let mut reexports = BTreeMap::new();
    for f in files.iter().filter(|f| f.is_face) {
        for stmt in f.code.split(';') {
            let t = stmt.trim();
            let Some(tree) = t
                .strip_prefix("pub use ")
                .or_else(|| t.strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            let mut flat = Vec::new();
            flatten(&compact(tree), &mut Vec::new(), &mut flat);
            for p in flat {
                let mut full = match p[0].as_str() {
                    "crate" | "super" | "self" => match absolute(f, &p) {
                        Some(a) => a,
                        None => continue,
                    },
                    _ => {
                        let mut a = f.module.clone();
                        a.extend(p.iter().cloned());
                        a
                    }
                };
                let Some(name) = full.last().cloned() else {
                    continue;
                };
                let mut key = f.module.clone();
                key.push(name);
                if key != full {
                    reexports.insert(key, std::mem::take(&mut full));
                }
            }
        }
    }
    let mut edges = Vec::new();
    for (i, f) in files.iter().enumerate() {
        for p in paths(&f.code) {
            let Some(abs) = absolute(f, &p) else { continue };
            let Some(j) = resolve(&abs, &by_module, &reexports, 0) else {
                continue;
            };
            if i != j {
                edges.push((i, j, p.join("::")));
            }
        }
    }
    Graph { files, edges }
}

fn top(f: &SourceFile) -> Option<&str> {
    f.module.first().map(String::as_str)
}

#[test]
fn every_module_is_in_a_layer() {
    let g = graph();
    let missing: BTreeSet<&str> = g
        .files
        .iter()
        .filter_map(top)
        .filter(|m| !LAYERS.contains(m))
        .collect();
    assert!(
        missing.is_empty(),
        "modules with no place in tests/layers.rs LAYERS: {missing:?}"
    );
}

#[test]
fn no_module_imports_one_above_it() {
    let g = graph();
    let rank = |f: &SourceFile| top(f).and_then(|m| LAYERS.iter().position(|l| *l == m));
    let mut back: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for (i, j, written) in &g.edges {
        let (a, b) = (&g.files[*i], &g.files[*j]);
        if let (Some(ra), Some(rb)) = (rank(a), rank(b))
            && rb > ra
        {
            back.entry((a.rel.clone(), b.rel.clone()))
                .or_default()
                .insert(written.clone());
        }
    }
    let report: Vec<String> = back
        .iter()
        .map(|((a, b), names)| format!("  src/{a} -> src/{b}: {names:?}"))
        .collect();
    assert!(
        report.is_empty(),
        "{} import(s) run back up the layers:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn no_files_import_each_other() {
    let g = graph();
    let n = g.files.len();
    let mut adj = vec![BTreeSet::new(); n];
    for (i, j, _) in &g.edges {
        let (a, b) = (&g.files[*i], &g.files[*j]);
        // A face hands its own files' names on; that is no import of theirs.
        if a.is_face && b.module.starts_with(&a.module) {
            continue;
        }
        adj[*i].insert(*j);
    }
    let circles: Vec<Vec<&str>> = strongly_connected(&adj)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.iter().map(|&i| g.files[i].rel.as_str()).collect())
        .collect();
    let report: Vec<String> = circles
        .iter()
        .map(|c| {
            let members: BTreeSet<usize> = c
                .iter()
                .map(|r| g.files.iter().position(|f| f.rel == *r).unwrap())
                .collect();
            let ties: BTreeSet<String> = g
                .edges
                .iter()
                .filter(|(i, j, _)| members.contains(i) && members.contains(j))
                .filter(|(i, j, _)| adj[*i].contains(j))
                .map(|(i, j, w)| format!("{} -> {}: {w}", g.files[*i].rel, g.files[*j].rel))
                .collect();
            format!(
                "  {c:?}\n    {}",
                ties.into_iter().collect::<Vec<_>>().join("\n    ")
            )
        })
        .collect();
    assert!(
        report.is_empty(),
        "{} circle(s) of files that import each other:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn only_the_cli_knows_exit_codes() {
    let g = graph();
    let offenders: BTreeSet<String> = g
        .edges
        .iter()
        .filter(|(i, j, _)| {
            let (a, b) = (&g.files[*i], &g.files[*j]);
            b.module.last().is_some_and(|m| m == "exit")
                && top(a) != Some("cli")
                && !a.module.is_empty()
        })
        .map(|(i, _, w)| format!("src/{}: {w}", g.files[*i].rel))
        .collect();
    assert!(
        offenders.is_empty(),
        "exit codes named outside src/cli:\n  {}",
        offenders.into_iter().collect::<Vec<_>>().join("\n  ")
    );
}

/// Tarjan's strongly connected components.
fn strongly_connected(adj: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adj: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.adj[v].clone() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let n = adj.len();
    let mut s = State {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn the_reader_sees_what_it_must() {
    // The scanner itself: a use tree, an inline path, a path in a comment or a string.
    let code = strip(
        "use super::{a, b::{C, D as E}};\nuse crate::x as y;\nlet x = crate::air::detect(y); // crate::cli::x\nlet s = \"crate::report\";\n#[cfg(test)]\nuse crate::battery;",
    );
    let got: Vec<String> = paths(&code).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        [
            "super::a",
            "super::b::C",
            "super::b::D",
            "crate::x",
            "crate::air::detect"
        ]
    );
}

#[test]
fn runs_are_loaded_only_by_the_handle() {
    // `RunHandle::open` loads a run; the rail envelope reads lifecycle.json as one of the
    // files whose integrity it checks. Nothing else reloads either from disk.
    let allowed: &[(&str, &[&str])] = &[
        ("Run::load(", &["case/handle.rs"]),
        ("Lifecycle::load(", &["case/handle.rs", "case/rail.rs"]),
    ];
    let mut offenders = Vec::new();
    for f in read_sources() {
        for (call, files) in allowed {
            if f.code.contains(call) && !files.contains(&f.rel.as_str()) {
                offenders.push(format!("src/{} calls {call}…)", f.rel));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "runs loaded outside RunHandle:\n  {}",
        offenders.join("\n  ")
    );
}

/// The parameter list of every function the file makes visible beyond itself (`pub`,
/// `pub(crate)`, `pub(super)`), as written.
fn visible_signatures(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("fn ") {
        let mut before = rest[..at].trim_end();
        // `pub async fn`, `pub const fn`, `pub unsafe fn`, `pub extern "C" fn`.
        while let Some(qualifier) = ["async", "const", "unsafe", "extern \"C\"", "extern"]
            .iter()
            .find(|q| before.ends_with(*q))
        {
            before = before[..before.len() - qualifier.len()].trim_end();
        }
        let visible = before.ends_with("pub")
            || before.ends_with("pub(crate)")
            || before.ends_with("pub(super)");
        let sig_end = rest[at..].find(['{', ';']).map_or(rest.len(), |e| at + e);
        let starts_word = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if visible && starts_word {
            out.push(
                rest[at..sig_end]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        rest = &rest[sig_end.max(at + 3)..];
    }
    out
}

#[test]
fn nothing_above_the_case_module_takes_a_bare_run_path() {
    // A run is opened once, into a `RunHandle`, by whoever starts the work (a CLI command,
    // the battery's trial, the demo); everything it calls takes the handle.
    let bare = [
        "run_dir: &Path",
        "run: &Path",
        "run_dir: &std::path::Path",
        "run: &std::path::Path",
    ];
    let mut offenders = Vec::new();
    for f in read_sources() {
        if matches!(f.module.first().map(String::as_str), Some("case" | "cli")) {
            continue;
        }
        for sig in visible_signatures(&f.code) {
            if bare.iter().any(|b| sig.contains(b)) {
                offenders.push(format!("src/{}: {sig}", f.rel));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "functions that take a run directory instead of a RunHandle:\n  {}",
        offenders.join("\n  ")
    );
}

#[test]
fn a_visible_signature_is_found_with_its_parameters() {
    let code = "pub fn a(run: &Path) -> u8 {\n}\nfn b(run: &Path) {}\npub(crate) fn c(\n    x: u8,\n    run_dir: &Path,\n);\npub async fn d() {}\nfn_e();\n";
    assert_eq!(
        visible_signatures(code),
        [
            "fn a(run: &Path) -> u8",
            "fn c( x: u8, run_dir: &Path, )",
            "fn d()"
        ]
    );
}

/// The module column of the README's Layout table, in the order it lists them.
fn readme_layers(readme: &str) -> Vec<String> {
    let readme = format!("\n{readme}");
    let Some(start) = readme.find("\n## Layout\n") else {
        return Vec::new();
    };
    let section = &readme[start + 1..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
    section[..end]
        .lines()
        .filter_map(|l| {
            l.strip_prefix("| `")?
                .split_once('`')
                .map(|(m, _)| m.to_string())
        })
        .collect()
}

#[test]
fn the_readme_layout_lists_the_layers_in_their_order() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let listed = readme_layers(&readme);
    assert_eq!(
        listed, LAYERS,
        "README.md's Layout table must list the modules of tests/layers.rs LAYERS, from the ground up"
    );
    // The reader itself: a table row names its module; prose and other sections do not.
    let sample = "## Layout\n\ntext `par`\n\n| module | x |\n|---|---|\n| `par` | a |\n| `cli` | b |\n\n## Next\n| `nope` | c |\n";
    assert_eq!(readme_layers(sample), ["par", "cli"]);
}
