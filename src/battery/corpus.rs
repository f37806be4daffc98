//! The scenario corpus on disk: `scenarios/<class>/<name>/scenario.json` (+ `air.json`,
//! `repo/`) and `labels-private/<class>/<name>.json`, read into strict types.
//!
//! Invariant: a [`Scenario`] or [`Label`] that exists was parsed from a document of the right
//! format and version with no unknown key; everything that could not be read is a
//! [`Problem`] naming its file instead. Loading never stops at the first bad file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::air::DeficiencyCode;
use crate::case::finalize::Status;
use crate::limits::Limit;

pub const SCENARIO_FORMAT: &str = "anvil-scenario";
pub const LABEL_FORMAT: &str = "anvil-label";
pub const FORMAT_VERSION: u32 = 1;
pub const SCENARIO_JSON: &str = "scenario.json";
pub const AIR_JSON: &str = "air.json";
pub const REPO_DIR: &str = "repo";

/// The nine scenario classes (DESIGN §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Documented,
    ImplicitInImpl,
    OnlyInTests,
    Conflicting,
    GenericName,
    Sensitive,
    UnitBearing,
    WeakSingleSource,
    Tautological,
}

impl Class {
    pub const ALL: [Class; 9] = [
        Class::Documented,
        Class::ImplicitInImpl,
        Class::OnlyInTests,
        Class::Conflicting,
        Class::GenericName,
        Class::Sensitive,
        Class::UnitBearing,
        Class::WeakSingleSource,
        Class::Tautological,
    ];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Documented => "documented",
            Class::ImplicitInImpl => "implicit-in-impl",
            Class::OnlyInTests => "only-in-tests",
            Class::Conflicting => "conflicting",
            Class::GenericName => "generic-name",
            Class::Sensitive => "sensitive",
            Class::UnitBearing => "unit-bearing",
            Class::WeakSingleSource => "weak-single-source",
            Class::Tautological => "tautological",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The language a scenario repository is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Typescript,
    Javascript,
    Python,
    Go,
    Java,
    Kotlin,
    Csharp,
    Ruby,
    Php,
}

impl Language {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Typescript => "typescript",
            Language::Javascript => "javascript",
            Language::Python => "python",
            Language::Go => "go",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
            Language::Csharp => "csharp",
            Language::Ruby => "ruby",
            Language::Php => "php",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `scenario.json` (`anvil-scenario` v1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScenarioDoc {
    pub format: String,
    pub format_version: u32,
    pub id: String,
    pub class: Class,
    pub skill: String,
    pub target: String,
    pub language: Language,
    /// When given, the case opens on this deficiency; it must be among those detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deficiency: Option<DeficiencyCode>,
}

/// `labels-private/<class>/<name>.json` (`anvil-label` v1): the answer key of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelDoc {
    pub format: String,
    pub format_version: u32,
    pub scenario: String,
    pub canary: String,
    pub expect: Expect,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    pub status: Status,
    #[serde(default)]
    pub values: BTreeMap<String, ValueExpectation>,
    #[serde(default)]
    pub evidence: Vec<EvidenceRegion>,
}

/// What one patched value must be: `{"equals": V}` for closed values, or `mustMention` /
/// `mustNotMention` phrase rules for text. Read as one strict struct (no untagged enum) and
/// classified by [`ValueExpectation::rule`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValueExpectation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub must_mention: Option<Vec<Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub must_not_mention: Option<Vec<String>>,
}

/// The classified form of a [`ValueExpectation`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRule<'a> {
    Equals(&'a Value),
    Mentions {
        must: &'a [Vec<String>],
        must_not: &'a [String],
    },
}

impl ValueExpectation {
    /// The rule this expectation states, or why it states none or both.
    ///
    /// # Errors
    ///
    /// A message when the expectation gives both `equals` and
    /// `mustMention`/`mustNotMention`, or neither `equals` nor `mustMention`.
    pub fn rule(&self) -> Result<ValueRule<'_>, &'static str> {
        let mentions = self.must_mention.is_some() || self.must_not_mention.is_some();
        match (&self.equals, mentions) {
            (Some(_), true) => Err("gives both `equals` and `mustMention`/`mustNotMention`"),
            (Some(v), false) => Ok(ValueRule::Equals(v)),
            (None, true) => Ok(ValueRule::Mentions {
                must: self.must_mention.as_deref().unwrap_or(&[]),
                must_not: self.must_not_mention.as_deref().unwrap_or(&[]),
            }),
            (None, false) => Err("gives neither `equals` nor `mustMention`"),
        }
    }
}

/// A repository region an investigation should cite: inclusive 1-based lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EvidenceRegion {
    pub path: String,
    pub lines: [u32; 2],
}

/// One failed check. `file` is the file (or directory) at fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub file: PathBuf,
    pub kind: &'static str,
    pub message: String,
}

impl Problem {
    pub fn new(file: impl Into<PathBuf>, kind: &'static str, message: impl Into<String>) -> Self {
        Problem {
            file: file.into(),
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

/// A scenario whose `scenario.json` parsed.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// `scenarios/<class>/<name>`.
    pub dir: PathBuf,
    /// `<class>/<name>`, from the directory.
    pub dir_id: String,
    pub doc: ScenarioDoc,
}

impl Scenario {
    #[must_use]
    pub fn file(&self) -> PathBuf {
        self.dir.join(SCENARIO_JSON)
    }
    #[must_use]
    pub fn air(&self) -> PathBuf {
        self.dir.join(AIR_JSON)
    }
    #[must_use]
    pub fn repo(&self) -> PathBuf {
        self.dir.join(REPO_DIR)
    }
}

/// A label file that parsed.
#[derive(Debug, Clone)]
pub struct Label {
    pub file: PathBuf,
    /// `<class>/<name>`, from the file's place under the labels directory.
    pub file_id: String,
    pub doc: LabelDoc,
}

/// Sorted entries of `dir` that are directories (`dirs`) or files, hidden names skipped.
/// A symlink, FIFO, socket or device is never followed nor silently skipped: it is a
/// problem naming it (a symlinked label would otherwise drop out of the seal unseen).
fn entries(dir: &Path, dirs: bool, problems: &mut Vec<Problem>) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let ty = entry.file_type()?;
        if (dirs && ty.is_dir()) || (!dirs && ty.is_file()) {
            out.push(entry.path());
        } else if !ty.is_dir() && !ty.is_file() {
            problems.push(Problem::new(
                entry.path(),
                "not_a_regular_file",
                if ty.is_symlink() {
                    "a symlink (never followed): the corpus holds only directories and regular files"
                } else {
                    "not a regular file: the corpus holds only directories and regular files"
                },
            ));
        }
    }
    out.sort();
    Ok(out)
}

/// Every symlink or other non-regular, non-directory entry under `dir`, sorted (none is
/// followed).
#[must_use]
pub fn special_files(dir: &Path) -> Vec<PathBuf> {
    walk(dir, |_, ty| !ty.is_dir() && !ty.is_file())
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads a versioned document: JSON syntax, then `format` and `formatVersion`, then the strict
/// type (unknown keys named by path).
fn read_doc<T: serde::de::DeserializeOwned>(file: &Path, format: &str) -> Result<T, Problem> {
    crate::json_path::read_versioned(file, format, FORMAT_VERSION, Limit::DocBytes)
        .map_err(|message| Problem::new(file, "unparseable", message))
}

/// Every `(class directory, entry)` under `dir`, two levels down: the entries are
/// directories (`dirs`) or files. An unreadable level is a problem naming it.
fn per_class(
    dir: &Path,
    what: &str,
    dirs: bool,
    problems: &mut Vec<Problem>,
) -> Vec<(PathBuf, PathBuf)> {
    let classes = match entries(dir, true, problems) {
        Ok(c) => c,
        Err(e) => {
            problems.push(Problem::new(
                dir,
                "unreadable",
                format!("cannot read the {what} directory: {e}"),
            ));
            return vec![];
        }
    };
    let mut out = Vec::new();
    for class_dir in classes {
        match entries(&class_dir, dirs, problems) {
            Ok(items) => out.extend(items.into_iter().map(|i| (class_dir.clone(), i))),
            Err(e) => problems.push(Problem::new(&class_dir, "unreadable", e.to_string())),
        }
    }
    out
}

/// Reads every `scenarios/<class>/<name>/scenario.json` under `dir`.
#[must_use]
pub fn load_scenarios(dir: &Path) -> (Vec<Scenario>, Vec<Problem>) {
    let mut scenarios = Vec::new();
    let mut problems = Vec::new();
    for (class_dir, scenario_dir) in per_class(dir, "scenarios", true, &mut problems) {
        let file = scenario_dir.join(SCENARIO_JSON);
        if !file.is_file() {
            problems.push(Problem::new(
                &file,
                "missing_file",
                "the scenario directory has no scenario.json",
            ));
            continue;
        }
        match read_doc::<ScenarioDoc>(&file, SCENARIO_FORMAT) {
            Ok(doc) => scenarios.push(Scenario {
                dir_id: format!("{}/{}", name_of(&class_dir), name_of(&scenario_dir)),
                dir: scenario_dir,
                doc,
            }),
            Err(p) => problems.push(p),
        }
    }
    (scenarios, problems)
}

/// Reads every `<class>/<name>.json` under the labels directory `dir`.
pub fn load_labels(dir: &Path) -> (Vec<Label>, Vec<Problem>) {
    let mut labels = Vec::new();
    let mut problems = Vec::new();
    for (class_dir, file) in per_class(dir, "labels", false, &mut problems) {
        let Some(stem) = name_of(&file).strip_suffix(".json").map(str::to_string) else {
            // Never a silent skip: a stray file in the answer key is reported.
            problems.push(Problem::new(
                &file,
                "unexpected_file",
                "the labels directory holds only `<class>/<name>.json` files",
            ));
            continue;
        };
        match read_doc::<LabelDoc>(&file, LABEL_FORMAT) {
            Ok(doc) => labels.push(Label {
                file_id: format!("{}/{stem}", name_of(&class_dir)),
                file,
                doc,
            }),
            Err(p) => problems.push(p),
        }
    }
    (labels, problems)
}

/// Reads one label file (a regular file, never through a symlink).
///
/// # Errors
///
/// A [`Problem`] of kind `not_a_file` when `file` is a symlink, directory or special file,
/// and `unparseable` when it cannot be read, is not JSON, is not a label of this format
/// version, or has unknown keys.
pub fn load_label(file: &Path) -> Result<LabelDoc, Problem> {
    if std::fs::symlink_metadata(file).is_ok_and(|m| !m.is_file()) {
        return Err(Problem::new(
            file,
            "not_a_file",
            "a label must be a regular file (symlinks are not followed)",
        ));
    }
    read_doc::<LabelDoc>(file, LABEL_FORMAT)
}

/// The labels commitment: sha256 over the canonical JSON of every label, sorted by scenario
/// id, as `sha256:<hex>`. Key order and whitespace in the files do not change it.
#[must_use]
pub fn seal(labels: &[Label]) -> String {
    let mut docs: Vec<&LabelDoc> = labels.iter().map(|l| &l.doc).collect();
    docs.sort_by(|a, b| a.scenario.cmp(&b.scenario));
    crate::canon::canonical_hash(&docs)
}

/// Every regular file under `dir`, recursively, sorted; hidden names included (a canary in a
/// dotfile is still a leak). Symlinks are not followed.
pub fn walk_files(dir: &Path) -> Vec<PathBuf> {
    walk(dir, |_, ty| ty.is_file())
}

/// Every entry under `dir` named `.git` (in any case, of any type), sorted; none is
/// entered. A scenario's repository is committed by the battery itself: a git directory of
/// its own would give that `git` its configuration (hooks, filters), and a `.git` file
/// another git directory anywhere on the host.
#[must_use]
pub fn git_entries(dir: &Path) -> Vec<PathBuf> {
    walk(dir, |entry, _| is_git_name(&entry.file_name()))
}

/// Whether `name` is `.git` in any case.
#[must_use]
pub fn is_git_name(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().eq_ignore_ascii_case(b".git")
}

/// Every entry under `dir` (recursively, never through a symlink) that `keep` accepts,
/// sorted; a kept directory is not entered, any other is.
fn walk(dir: &Path, keep: impl Fn(&std::fs::DirEntry, &std::fs::FileType) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in read.flatten() {
            let Ok(ty) = entry.file_type() else { continue };
            if keep(&entry, &ty) {
                out.push(entry.path());
            } else if ty.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// Number of lines in `bytes`: newlines, plus one for a final unterminated line.
#[must_use]
pub fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}
