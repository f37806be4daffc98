//! `scenarios check`: is the corpus sound enough to score an investigator against?
//!
//! Invariant: every failure is a [`Problem`] naming the file at fault, and every check runs
//! even when others fail, so one pass lists everything to fix. A scenario's deficiency is
//! decided by [`crate::case::open::preflight`], the same resolution `case open` uses.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use super::corpus::{
    Class, Label, Problem, Scenario, ValueRule, line_count, load_labels, load_scenarios, walk_files,
};
use crate::case::finalize::Status;
use crate::case::open::{OpenMode, OpenRequest, preflight};
use crate::limits::Limit;
use crate::skill::{ValueConstraint, registry};

/// A repository smaller than this is not a realistic investigation.
pub const MIN_REPO_FILES: usize = 4;
pub const MIN_REPO_LINES: usize = 120;
/// Fields and errors the target's operation must describe at least.
pub const MIN_OPERATION_FIELDS: usize = 3;
pub const MIN_OPERATION_ERRORS: usize = 2;
/// Coverage rules (issue 6).
pub const MIN_PER_CLASS: usize = 5;
pub const MIN_LANGUAGES: usize = 4;
pub const MAX_LANGUAGE_SHARE_PERCENT: usize = 40;
pub const MIN_CLASSES_PER_SKILL: usize = 3;

/// Whether the corpus-wide coverage rules apply (off to check a partial corpus).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub coverage: bool,
    /// Run the oracle on every scenario and name each label it cannot reach (R-BAT-8).
    pub oracle: bool,
}

/// The outcome of a check.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub scenarios: usize,
    pub labels: usize,
    pub problems: Vec<Problem>,
}

impl Report {
    #[must_use]
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

fn canary_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new("^ANVIL-CANARY-[A-Za-z0-9]{16,}$").expect("static regex"))
}

/// Checks the corpus under `scenarios_dir` against the labels under `labels_dir`.
#[must_use]
pub fn check(scenarios_dir: &Path, labels_dir: &Path, opts: Options) -> Report {
    let (scenarios, problems) = load_scenarios(scenarios_dir);
    check_loaded(scenarios_dir, &scenarios, problems, labels_dir, opts)
}

/// [`check`] of the scenarios already loaded from `scenarios_dir` (with the `problems`
/// loading them found), for a caller that holds them.
#[must_use]
pub fn check_loaded(
    scenarios_dir: &Path,
    scenarios: &[Scenario],
    mut problems: Vec<Problem>,
    labels_dir: &Path,
    opts: Options,
) -> Report {
    let (labels, label_problems) = load_labels(labels_dir);
    problems.extend(label_problems);

    for s in scenarios {
        check_scenario(s, &mut problems);
    }
    let by_id: BTreeMap<&str, &Scenario> =
        scenarios.iter().map(|s| (s.dir_id.as_str(), s)).collect();
    check_pairing(scenarios, &labels, &mut problems);
    for l in &labels {
        check_label(
            l,
            by_id.get(l.doc.scenario.as_str()).copied(),
            &mut problems,
        );
    }
    check_canaries(scenarios_dir, &labels, &mut problems);
    if opts.coverage {
        problems.extend(coverage(scenarios_dir, labels_dir, scenarios, &labels));
    }
    if opts.oracle {
        // Only scenarios that are otherwise sound: a broken one is already named.
        let broken: BTreeSet<PathBuf> = problems.iter().map(|p| p.file.clone()).collect();
        let sound: Vec<Scenario> = scenarios
            .iter()
            .filter(|s| {
                let label = labels_dir.join(format!("{}.json", s.dir_id));
                !broken.iter().any(|f| f.starts_with(&s.dir) || *f == label)
            })
            .cloned()
            .collect();
        problems.extend(super::reach::oracle_problems(&sound, labels_dir));
    }
    Report {
        scenarios: scenarios.len(),
        labels: labels.len(),
        problems,
    }
}

fn check_scenario(s: &Scenario, problems: &mut Vec<Problem>) {
    let file = s.file();
    let doc = &s.doc;
    for special in super::corpus::special_files(&s.dir) {
        problems.push(Problem::new(
            special,
            "not_a_regular_file",
            "a scenario holds only directories and regular files: a symlink could reach the labels or the host",
        ));
    }
    for git in super::corpus::git_entries(&s.dir) {
        problems.push(Problem::new(
            git,
            "git_entry",
            "a scenario holds no `.git`: the battery commits each copy itself, and a git directory of the scenario's own would configure that git (its hooks and filters run on the host)",
        ));
    }
    if doc.id != s.dir_id {
        problems.push(Problem::new(
            &file,
            "id_mismatch",
            format!(
                "id is `{}` but the directory says `{}` (id is `<class>/<name>` of its directory)",
                doc.id, s.dir_id
            ),
        ));
    }
    let dir_class = s.dir_id.split('/').next().unwrap_or_default();
    if doc.class.as_str() != dir_class {
        problems.push(Problem::new(
            &file,
            "class_mismatch",
            format!(
                "class is `{}` but the scenario lives under `{dir_class}/`",
                doc.class
            ),
        ));
    }
    let air = s.air();
    let air_ok = match crate::air::Air::load(&air) {
        Ok(model) => {
            check_whole_operation(&model, &air, &doc.target, problems);
            true
        }
        Err(e) => {
            problems.push(Problem::new(&air, "invalid_air", e.to_string()));
            false
        }
    };
    let repo = s.repo();
    let repo_ok = repo.is_dir();
    if repo_ok {
        check_repo_size(&repo, problems);
    } else {
        problems.push(Problem::new(
            &repo,
            "missing_file",
            "the scenario has no repo/ directory",
        ));
    }
    if air_ok && repo_ok {
        let req = OpenRequest {
            air,
            repo,
            skill: doc.skill.clone(),
            target: doc.target.clone(),
            deficiency: doc.deficiency.map(|d| d.as_str().to_string()),
            cases_dir: PathBuf::new(),
            executor: "scenarios-check".into(),
            scopes: vec![],
            mode: OpenMode::New,
            tool_limits: vec![],
            snapshots: vec![],
        };
        if let Err(e) = preflight(&req) {
            problems.push(Problem::new(
                &file,
                "no_deficiency",
                format!("`case open` would refuse this scenario: {e}"),
            ));
        }
    }
}

/// The AIR describes the whole operation around the target — several fields and errors —
/// so the investigation faces realistic neighbours, not a lone target.
fn check_whole_operation(
    air: &crate::air::Air,
    file: &Path,
    target: &str,
    problems: &mut Vec<Problem>,
) {
    let Ok(key) = target.parse::<crate::air::TargetKey>() else {
        return;
    };
    let Some(op) = key.operation().and_then(|id| air.operation(id)) else {
        return;
    };
    if op.fields.len() < MIN_OPERATION_FIELDS || op.errors.len() < MIN_OPERATION_ERRORS {
        problems.push(Problem::new(
            file,
            "operation_too_thin",
            format!(
                "operation `{}` has {} fields and {} errors; a scenario's AIR describes the whole \
                 operation: at least {MIN_OPERATION_FIELDS} fields and {MIN_OPERATION_ERRORS} errors",
                op.id,
                op.fields.len(),
                op.errors.len()
            ),
        ));
    }
}

fn check_repo_size(repo: &Path, problems: &mut Vec<Problem>) {
    let files = walk_files(repo);
    let lines: usize = files
        .iter()
        .filter_map(|f| read_checked(f, problems))
        .map(|b| line_count(&b))
        .sum();
    if files.len() < MIN_REPO_FILES || lines < MIN_REPO_LINES {
        problems.push(Problem::new(
            repo,
            "repo_too_small",
            format!(
                "the repository has {} files and {lines} lines; a scenario needs at least \
                 {MIN_REPO_FILES} files and {MIN_REPO_LINES} lines",
                files.len()
            ),
        ));
    }
}

/// Every scenario has exactly one label and every label one scenario.
fn check_pairing(scenarios: &[Scenario], labels: &[Label], problems: &mut Vec<Problem>) {
    let ids: BTreeSet<&str> = scenarios.iter().map(|s| s.dir_id.as_str()).collect();
    let mut labelled: HashMap<&str, &Path> = HashMap::new();
    for l in labels {
        if l.doc.scenario != l.file_id {
            problems.push(Problem::new(
                &l.file,
                "id_mismatch",
                format!(
                    "the label names scenario `{}` but its file is the label of `{}`",
                    l.doc.scenario, l.file_id
                ),
            ));
        }
        let id = l.doc.scenario.as_str();
        if !ids.contains(id) {
            problems.push(Problem::new(
                &l.file,
                "orphan_label",
                format!("no scenario `{id}` exists for this label"),
            ));
        }
        if let Some(first) = labelled.insert(id, &l.file) {
            problems.push(Problem::new(
                &l.file,
                "duplicate_label",
                format!("scenario `{id}` already has a label in {}", first.display()),
            ));
        }
    }
    for s in scenarios {
        if !labelled.contains_key(s.dir_id.as_str()) {
            problems.push(Problem::new(
                s.file(),
                "missing_label",
                format!("no label names scenario `{}`", s.dir_id),
            ));
        }
    }
}

fn is_decline(status: Status) -> bool {
    status != Status::ProposalGenerated
}

fn check_label(l: &Label, scenario: Option<&Scenario>, problems: &mut Vec<Problem>) {
    let mut bad = |kind: &'static str, message: String| {
        problems.push(Problem::new(&l.file, kind, message));
    };
    let expect = &l.doc.expect;
    if !canary_pattern().is_match(&l.doc.canary) {
        bad(
            "bad_canary",
            format!(
                "canary `{}` does not match ANVIL-CANARY-[A-Za-z0-9]{{16,}}",
                l.doc.canary
            ),
        );
    }
    if is_decline(expect.status) && !expect.values.is_empty() {
        bad(
            "label_values",
            format!(
                "a `{}` label is a decline and carries no values",
                expect.status
            ),
        );
    }
    if expect.status == Status::ProposalGenerated && expect.values.is_empty() {
        bad(
            "label_values",
            "a `proposal_generated` label names at least one expected value".into(),
        );
    }
    if matches!(expect.status, Status::ProposalGenerated | Status::Supported)
        && expect.evidence.is_empty()
    {
        bad(
            "label_evidence",
            format!(
                "a `{}` label lists the evidence regions that prove it",
                expect.status
            ),
        );
    }
    let Some(scenario) = scenario else { return };
    if let Some(skill) = registry().get(&scenario.doc.skill) {
        let writable = skill.policy.writable_fields();
        for (field, expectation) in &expect.values {
            let at = format!("expect.values.{field}");
            if !writable.contains(&field.as_str()) {
                bad(
                    "label_values",
                    format!(
                        "`{at}`: skill `{}` writes only {}",
                        skill.name,
                        writable.join(", ")
                    ),
                );
                continue;
            }
            let constraint = &skill.policy.value_constraints[field.as_str()];
            if let Err(m) = check_value(expectation.rule(), constraint) {
                bad("label_values", format!("`{at}` {m}"));
            }
        }
    }
    let repo = scenario.repo();
    for (i, region) in expect.evidence.iter().enumerate() {
        let at = format!("expect.evidence[{i}]");
        match evidence_lines(&repo, &region.path) {
            Err(m) => bad("evidence_missing", format!("`{at}`: `{}` {m}", region.path)),
            Ok(n) => {
                let [a, b] = region.lines;
                if a < 1 || a > b || b as usize > n {
                    bad(
                        "evidence_lines",
                        format!(
                            "`{at}`: lines [{a}, {b}] are not a range inside `{}` (1..={n})",
                            region.path
                        ),
                    );
                }
            }
        }
    }
}

/// Whether an expected value is of the right form and admitted by the skill's constraint.
fn check_value(
    rule: Result<ValueRule<'_>, &'static str>,
    constraint: &ValueConstraint,
) -> Result<(), String> {
    let rule = rule.map_err(str::to_string)?;
    match (rule, constraint) {
        (ValueRule::Equals(_), ValueConstraint::Text) => {
            Err("is free text: state it with `mustMention` groups, not `equals`".into())
        }
        (ValueRule::Equals(v), c) if !c.admits(v) => Err(format!("`{v}` is not {}", c.describe())),
        (ValueRule::Equals(_), _) => Ok(()),
        (ValueRule::Mentions { .. }, c) if *c != ValueConstraint::Text => {
            Err(format!("is {}: state it with `equals`", c.describe()))
        }
        (ValueRule::Mentions { must, must_not }, _) => {
            if must.is_empty() {
                return Err("needs at least one `mustMention` group".into());
            }
            let blank = |s: &String| s.trim().is_empty();
            if must.iter().any(|g| g.is_empty() || g.iter().any(blank))
                || must_not.iter().any(blank)
            {
                return Err("has an empty group or a blank phrase".into());
            }
            Ok(())
        }
    }
}

/// Lines in the repository file `path`, refusing paths that leave the repository.
fn evidence_lines(repo: &Path, path: &str) -> Result<usize, &'static str> {
    let rel = Path::new(path);
    if path.is_empty()
        || path.contains('\\')
        || !rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err("is not a relative path inside the repository");
    }
    let full = repo.join(rel);
    let meta = std::fs::symlink_metadata(&full).map_err(|_| "does not exist in the repository")?;
    if !meta.is_file() {
        return Err("is not a regular file in the repository");
    }
    crate::limits::read_capped(&full, Limit::DocBytes)
        .map(|b| line_count(&b))
        .map_err(|_| "cannot be read (or is over the DOC_BYTES cap)")
}

/// The bytes of a corpus file a check reads: a regular file under [`Limit::DocBytes`]. One
/// that cannot be read is a problem naming it, never skipped.
fn read_checked(file: &Path, problems: &mut Vec<Problem>) -> Option<Vec<u8>> {
    match crate::limits::read_capped(file, Limit::DocBytes) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            problems.push(Problem::new(
                file,
                "unreadable",
                format!("cannot be read: {e}"),
            ));
            None
        }
    }
}

/// Canaries are unique and appear in no file under the scenarios directory; `mustMention`
/// phrases appear in neither `scenario.json` nor `air.json` of their own scenario (the
/// truth must be found in the repository, not read off the inputs).
fn check_canaries(scenarios_dir: &Path, labels: &[Label], problems: &mut Vec<Problem>) {
    let mut seen: HashMap<&str, &Path> = HashMap::new();
    for l in labels {
        if let Some(first) = seen.insert(l.doc.canary.as_str(), &l.file) {
            problems.push(Problem::new(
                &l.file,
                "duplicate_canary",
                format!(
                    "canary `{}` is also the canary of {}",
                    l.doc.canary,
                    first.display()
                ),
            ));
        }
    }
    let canaries: Vec<&Label> = labels.iter().filter(|l| !l.doc.canary.is_empty()).collect();
    for file in walk_files(scenarios_dir) {
        let Some(bytes) = read_checked(&file, problems) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for l in &canaries {
            if text.contains(l.doc.canary.as_str()) {
                problems.push(Problem::new(
                    &file,
                    "canary_leak",
                    format!(
                        "contains the canary of {}; no label text may appear under scenarios/",
                        l.file.display()
                    ),
                ));
            }
        }
    }
    for l in labels {
        let Some((class, name)) = l.doc.scenario.split_once('/') else {
            continue;
        };
        let dir = scenarios_dir.join(class).join(name);
        for input in [
            dir.join(super::corpus::SCENARIO_JSON),
            dir.join(super::corpus::AIR_JSON),
        ] {
            // A missing or unreadable input is already a problem of its own.
            let Ok(bytes) = crate::limits::read_capped(&input, Limit::DocBytes) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes).to_lowercase();
            for (field, expectation) in &l.doc.expect.values {
                let phrases = expectation.must_mention.iter().flatten().flatten();
                for phrase in phrases {
                    if contains_phrase(&text, &phrase.to_lowercase()) {
                        problems.push(Problem::new(
                            &input,
                            "phrase_leak",
                            format!(
                                "states `{phrase}`, a phrase {} expects in `{field}`: the \
                                 truth must be found in the repository",
                                l.file.display()
                            ),
                        ));
                    }
                }
            }
        }
    }
}

/// True when `phrase` occurs in `text` not inside a larger identifier.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    if phrase.is_empty() {
        return false;
    }
    text.match_indices(phrase).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + phrase.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The corpus-wide rules of issue 6. Failures name the scenarios (or labels) directory.
pub fn coverage(
    scenarios_dir: &Path,
    labels_dir: &Path,
    scenarios: &[Scenario],
    labels: &[Label],
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut bad = |file: &Path, message: String| {
        problems.push(Problem::new(file, "coverage", message));
    };
    let mut per_class: BTreeMap<Class, usize> = BTreeMap::new();
    let mut per_language: BTreeMap<&str, usize> = BTreeMap::new();
    let mut skill_classes: BTreeMap<&str, BTreeSet<Class>> = BTreeMap::new();
    for s in scenarios {
        *per_class.entry(s.doc.class).or_default() += 1;
        *per_language.entry(s.doc.language.as_str()).or_default() += 1;
        skill_classes
            .entry(s.doc.skill.as_str())
            .or_default()
            .insert(s.doc.class);
    }
    for class in Class::ALL {
        let n = per_class.get(&class).copied().unwrap_or(0);
        if n < MIN_PER_CLASS {
            bad(
                scenarios_dir,
                format!(
                    "class `{class}` has {n} scenarios; every class needs at least {MIN_PER_CLASS}"
                ),
            );
        }
    }
    if per_language.len() < MIN_LANGUAGES {
        bad(
            scenarios_dir,
            format!(
                "the corpus uses {} languages ({}); it needs at least {MIN_LANGUAGES}",
                per_language.len(),
                per_language.keys().copied().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    let total = scenarios.len();
    for (language, n) in &per_language {
        if n * 100 > total * MAX_LANGUAGE_SHARE_PERCENT {
            bad(
                scenarios_dir,
                format!(
                    "{n} of {total} scenarios are {language}; no language may exceed \
                     {MAX_LANGUAGE_SHARE_PERCENT}%"
                ),
            );
        }
    }
    for skill in registry().names() {
        let n = skill_classes.get(skill).map_or(0, BTreeSet::len);
        if n < MIN_CLASSES_PER_SKILL {
            bad(
                scenarios_dir,
                format!(
                    "skill `{skill}` appears in {n} classes; every skill needs at least \
                     {MIN_CLASSES_PER_SKILL}"
                ),
            );
        }
    }
    let declines = labels
        .iter()
        .filter(|l| is_decline(l.doc.expect.status))
        .count();
    if declines * 3 < labels.len() || labels.is_empty() {
        bad(
            labels_dir,
            format!(
                "{declines} of {} labels expect a decline; at least a third must",
                labels.len()
            ),
        );
    }
    problems
}
