//! `case open`: materialise a new immutable run (or name an existing one to resume).
//!
//! Invariant: every input is resolved and validated before anything touches the disk; a new
//! run is assembled in a hidden staging directory and renamed into place, so a refusal
//! leaves the cases directory as it was and no reader ever sees half a run.

use std::fs;
use std::path::{Path, PathBuf};

use globset::Glob;

use super::doc::{
    CASE_FORMAT, CASE_FORMAT_VERSION, CaseDoc, CasePolicy, Context, DeclaredSnapshot,
    ExpectedOutput, Identity, Inputs, Phase, Procedure, SkillRef, TargetSnapshot, Task, Workspace,
};
use super::error::CaseError;
use super::key::{CaseKey, RunId};
use super::layout::{CASE_JSON, JOURNAL, LIFECYCLE_JSON, OUTPUT_DIR, SOURCE_JSON, WORKSPACE_DIR};
use super::lifecycle::{Lifecycle, now};
use super::proposal::{PROPOSAL_FORMAT, PROPOSAL_FORMAT_VERSION};
use super::verify::{Current, staleness};
use super::views::{CASE_MD, SCHEMA_FILE, render_views};
use crate::air::{
    Air, Deficiency, DeficiencyCode, TargetKey, deficiencies_for, detect, name_words,
};
use crate::fsio;
use crate::repo::digest::SourceManifest;
use crate::skill::{EvidenceKind, Scope, SkillContract, registry};

/// How `open` treats existing runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenMode {
    /// Always a new run (the default).
    New,
    /// Name an existing run to continue; nothing is written.
    Resume(PathBuf),
    /// A new run that supersedes the named one; the named run is kept untouched.
    Replace(PathBuf),
}

/// Everything `case open` needs, as given by the caller.
#[derive(Debug, Clone)]
pub struct OpenRequest {
    pub air: PathBuf,
    pub repo: PathBuf,
    pub skill: String,
    pub target: String,
    pub deficiency: Option<String>,
    pub cases_dir: PathBuf,
    pub executor: String,
    /// `GLOB=KIND` rules; when given they replace the default inspect scopes.
    pub scopes: Vec<String>,
    pub mode: OpenMode,
    /// `NAME=VALUE` overrides of the investigation tools' limits for this case.
    pub tool_limits: Vec<String>,
    /// Database snapshots to declare (repository-relative). Empty: every
    /// `*.snapshot.json` inside the inspect scopes.
    pub snapshots: Vec<String>,
}

impl OpenRequest {
    /// A request for a new run with the skill's default scopes, tool limits and snapshots.
    #[must_use]
    pub fn new(
        air: PathBuf,
        repo: PathBuf,
        skill: &str,
        target: &str,
        cases_dir: PathBuf,
        executor: &str,
    ) -> OpenRequest {
        OpenRequest {
            air,
            repo,
            skill: skill.into(),
            target: target.into(),
            deficiency: None,
            cases_dir,
            executor: executor.into(),
            scopes: vec![],
            mode: OpenMode::New,
            tool_limits: vec![],
            snapshots: vec![],
        }
    }
}

/// What `open` produced.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Opened {
    pub run_dir: PathBuf,
    pub case_key: CaseKey,
    pub run_id: RunId,
    pub resumed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<RunId>,
}

/// The validated inputs of an open; building it touches nothing on disk.
struct Resolved {
    air: Air,
    /// The sha256 of the bytes `air` was parsed from.
    air_bytes_hash: String,
    air_path: PathBuf,
    repo: PathBuf,
    skill: &'static SkillContract,
    target: TargetKey,
    deficiency: DeficiencyCode,
    deficiency_detail: String,
    scopes: Vec<Scope>,
    case_key: CaseKey,
    tool_limits: std::collections::BTreeMap<String, u64>,
    snapshots: Vec<DeclaredSnapshot>,
}

/// Parses a `GLOB=KIND` scope rule, refusing globs that could leave the repository.
///
/// # Errors
///
/// `CaseError::BadScope` when `rule` has no `=`, the glob is empty, absolute,
/// home-relative, contains a backslash or a `..` segment, or is not a valid glob, or the
/// kind is unknown or one the engine derives itself (not assignable by a scope).
pub fn parse_scope(rule: &str) -> Result<Scope, CaseError> {
    let bad = |reason: &str| CaseError::BadScope {
        scope: rule.to_string(),
        reason: reason.to_string(),
    };
    let (glob, kind) = rule
        .rsplit_once('=')
        .ok_or_else(|| bad("expected GLOB=KIND"))?;
    if glob.is_empty() {
        return Err(bad("the glob is empty"));
    }
    if glob.starts_with('/') || glob.starts_with('~') || glob.contains('\\') {
        return Err(bad("the glob escapes the repository: it must be relative"));
    }
    if glob.split('/').any(|seg| seg == "..") {
        return Err(bad("the glob escapes the repository through `..`"));
    }
    Glob::new(glob).map_err(|e| bad(&format!("not a glob: {e}")))?;
    let kind = EvidenceKind::parse(kind).ok_or_else(|| {
        bad(&format!(
            "unknown evidence kind `{kind}`; scopes assign implementation, contract_test, schema or doc"
        ))
    })?;
    if !kind.assignable_by_scope() {
        return Err(bad(&format!(
            "kind `{kind}` is derived by the engine and cannot be assigned by a scope"
        )));
    }
    Ok(Scope {
        glob: glob.to_string(),
        kind,
    })
}

fn resolve(req: &OpenRequest) -> Result<Resolved, CaseError> {
    let (air, air_bytes_hash) = Air::load_hashed(&req.air)?;
    let reg = registry();
    let skill = reg.get(&req.skill).ok_or_else(|| CaseError::UnknownSkill {
        skill: req.skill.clone(),
        known: reg.names().join(", "),
    })?;
    let target: TargetKey = req.target.parse()?;
    if !air.contains(&target) {
        return Err(CaseError::TargetNotInAir {
            target: target.to_string(),
            air: req.air.display().to_string(),
        });
    }
    if target.kind() != skill.target_kind {
        return Err(CaseError::WrongTargetKind {
            skill: skill.name.clone(),
            target: target.to_string(),
            expected: skill.target_kind.to_string(),
            actual: target.kind().to_string(),
        });
    }
    let plan = detect(&air);
    let found = deficiencies_for(&plan, &skill.name, &target);
    let chosen = choose_deficiency(req.deficiency.as_deref(), &found, skill, &target)?;
    if !req.repo.is_dir() {
        return Err(CaseError::RepoNotDir {
            path: req.repo.clone(),
        });
    }
    let scopes = if req.scopes.is_empty() {
        reg.default_scopes.clone()
    } else {
        req.scopes
            .iter()
            .map(|s| parse_scope(s))
            .collect::<Result<_, _>>()?
    };
    let tool_limits = parse_tool_limits(&req.tool_limits)?;
    let repo = fs::canonicalize(&req.repo).map_err(CaseError::io("resolve", &req.repo))?;
    let air_path = fs::canonicalize(&req.air).map_err(CaseError::io("resolve", &req.air))?;
    let snapshots = super::snapshots::declare(&repo, &scopes, &req.snapshots)?;
    Ok(Resolved {
        case_key: CaseKey::new(&skill.name, &target),
        deficiency: chosen.code,
        deficiency_detail: chosen.detail(),
        air,
        air_bytes_hash,
        air_path,
        repo,
        skill,
        target,
        scopes,
        tool_limits,
        snapshots,
    })
}

/// The deficiency the case opens on: the one asked for (`code`), which must be among those
/// detected for the target, or else the first detected.
///
/// # Errors
///
/// `CaseError::DeficiencyNotDetected` when `code` is not among `found`; `NoDeficiency` when
/// no code is asked for and nothing was detected.
fn choose_deficiency<'a>(
    code: Option<&str>,
    found: &[&'a Deficiency],
    skill: &SkillContract,
    target: &TargetKey,
) -> Result<&'a Deficiency, CaseError> {
    match code {
        None => found
            .first()
            .copied()
            .ok_or_else(|| CaseError::NoDeficiency {
                skill: skill.name.clone(),
                target: target.to_string(),
                triggers: skill
                    .policy
                    .triggers
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        Some(code) => found
            .iter()
            .copied()
            .find(|d| d.code.as_str() == code)
            .ok_or_else(|| CaseError::DeficiencyNotDetected {
                code: code.to_string(),
                skill: skill.name.clone(),
                target: target.to_string(),
                detected: if found.is_empty() {
                    "none".into()
                } else {
                    found
                        .iter()
                        .map(|d| d.code.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            }),
    }
}

/// Parses the `NAME=VALUE` tool-limit overrides, and checks them against the investigation
/// tools' known limits.
///
/// # Errors
///
/// `CaseError::BadToolLimit` for a rule without `=` or whose value is not a whole number,
/// or for overrides the tools' limits refuse (naming all the rules).
fn parse_tool_limits(
    rules: &[String],
) -> Result<std::collections::BTreeMap<String, u64>, CaseError> {
    let mut tool_limits = std::collections::BTreeMap::new();
    for rule in rules {
        let bad = |reason: String| CaseError::BadToolLimit {
            rule: rule.clone(),
            reason,
        };
        let (name, value) = rule
            .split_once('=')
            .ok_or_else(|| bad("expected NAME=VALUE".into()))?;
        let value: u64 = value
            .parse()
            .map_err(|_| bad(format!("`{value}` is not a whole number")))?;
        tool_limits.insert(name.to_string(), value);
    }
    super::tool_limits::ToolLimits::default()
        .with_overrides(&tool_limits)
        .map_err(|reason| CaseError::BadToolLimit {
            rule: rules.join(" "),
            reason,
        })?;
    Ok(tool_limits)
}

/// Resolves `req` exactly as [`open`] does and writes nothing: the deficiency a case would
/// open on. `scenarios check` uses it, so a scenario is sound by the same detection.
///
/// # Errors
///
/// The refusals of resolving `req`, as [`open`] has them: `Air` (an invalid AIR),
/// `UnknownSkill`, `Target` (malformed), `TargetNotInAir`, `WrongTargetKind`,
/// `NoDeficiency` or `DeficiencyNotDetected`, `RepoNotDir`, `BadScope`, `BadToolLimit`,
/// `BadSnapshot`, and `Io` when the repository or AIR path cannot be resolved.
pub fn preflight(req: &OpenRequest) -> Result<DeficiencyCode, CaseError> {
    resolve(req).map(|r| r.deficiency)
}

/// Opens a case as `req` says: a new run, a resumed one, or a replacement.
///
/// # Errors
///
/// The refusals of [`preflight`]; for resume or replace, the errors of opening the named
/// run, `WrongCase` when it belongs to another case, and `Stale` when a resumed run is
/// stale; `Io` when recording the source manifest or materialising the run directory fails.
pub fn open(req: &OpenRequest) -> Result<Opened, CaseError> {
    let r = resolve(req)?;
    let revision = crate::repo::revision(&r.repo);
    let policy = CasePolicy::build(r.skill, r.scopes.clone());
    let current = Current {
        air_hash: Some(r.air.hash()),
        source_revision: Some(revision.clone()),
    };
    let supersedes = match &req.mode {
        OpenMode::New => None,
        OpenMode::Resume(path) | OpenMode::Replace(path) => {
            let run = super::handle::RunHandle::open(path)?.into_run();
            if run.doc.identity.case_key != r.case_key {
                return Err(CaseError::WrongCase {
                    run: path.display().to_string(),
                    expected: r.case_key.to_string(),
                    actual: run.doc.identity.case_key.to_string(),
                });
            }
            if matches!(req.mode, OpenMode::Resume(_)) {
                let stale = staleness(&run.doc, &current);
                if !stale.is_empty() {
                    return Err(CaseError::Stale {
                        run: path.display().to_string(),
                        fields: stale,
                    });
                }
                return Ok(Opened {
                    run_dir: run.dir.clone(),
                    case_key: r.case_key,
                    run_id: run.doc.identity.run_id.clone(),
                    resumed: true,
                    supersedes: None,
                });
            }
            Some(run.doc.identity.run_id.clone())
        }
    };

    let run_id = RunId::generate();
    let manifest = if crate::repo::committed::is_commit_id(&revision) {
        None
    } else {
        Some(record_source(&r, &req.cases_dir)?)
    };
    let mut doc = build_doc(
        &r,
        run_id.clone(),
        revision,
        policy,
        &req.executor,
        supersedes.clone(),
    );
    doc.identity.source_digest = manifest.as_ref().map(SourceManifest::digest);
    let case_dir = req.cases_dir.join(r.case_key.as_str());
    let run_dir = materialize(&case_dir, &doc, manifest.as_ref())?;
    Ok(Opened {
        run_dir,
        case_key: r.case_key,
        run_id,
        resumed: false,
        supersedes,
    })
}

fn build_doc(
    r: &Resolved,
    run_id: RunId,
    revision: String,
    policy: CasePolicy,
    executor: &str,
    supersedes: Option<RunId>,
) -> CaseDoc {
    let skill = r.skill;
    let target = TargetSnapshot::capture(&r.air, &r.target, skill)
        .expect("resolve checked the target exists");
    let mut search_terms = vec![target.name().to_string()];
    for w in name_words(target.name()) {
        if w.len() > 2 && !search_terms.contains(&w) {
            search_terms.push(w);
        }
    }
    if let Some(op) = &target.operation {
        search_terms.push(op.id.clone());
        search_terms.push(op.path.clone());
    }
    let outputs = vec![
        "output/evidence.json".to_string(),
        "output/claims.json".into(),
        "output/proposal.json".into(),
        "output/critique.json".into(),
        "output/tests.json".into(),
        "output/result.json".into(),
    ];
    CaseDoc {
        format: CASE_FORMAT.into(),
        format_version: CASE_FORMAT_VERSION,
        identity: Identity {
            run_id,
            case_key: r.case_key.clone(),
            air_hash: r.air.hash(),
            air_bytes_hash: Some(r.air_bytes_hash.clone()),
            source_revision: revision,
            source_digest: None,
            skill: skill.name.clone(),
            skill_version: skill.version,
            policy_hash: policy.hash(),
            executor: executor.to_string(),
            created_at: now(),
            supersedes,
        },
        task: Task {
            question: skill.question.clone(),
            skill: skill.name.clone(),
            deficiency: r.deficiency,
            deficiency_detail: r.deficiency_detail.clone(),
            phases: ["research", "extract", "synthesize", "critique", "finalize"]
                .map(String::from)
                .to_vec(),
            outputs: outputs.clone(),
        },
        context: Context {
            current_values: target.current.clone(),
            inferred: target.inferred.clone(),
            search_terms,
        },
        target,
        workspace: Workspace {
            scratch: format!("{WORKSPACE_DIR}/"),
            output: format!("{OUTPUT_DIR}/"),
        },
        skill: SkillRef {
            name: skill.name.clone(),
            version: skill.version,
        },
        policy,
        procedure: Procedure {
            phases: phases(),
            retrieval_hints: skill.retrieval_hints.clone(),
        },
        expected_output: ExpectedOutput {
            proposal_schema: SCHEMA_FILE.into(),
            proposal_format: PROPOSAL_FORMAT.into(),
            proposal_format_version: PROPOSAL_FORMAT_VERSION,
            files: outputs,
        },
        inputs: Inputs {
            air: r.air_path.display().to_string(),
            repository: r.repo.display().to_string(),
        },
        tool_limits: r.tool_limits.clone(),
        database_snapshots: r.snapshots.clone(),
    }
}

fn phases() -> Vec<Phase> {
    let phase = |name: &str, goal: &str, produces: &[&str]| Phase {
        name: name.into(),
        goal: goal.into(),
        produces: produces
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
    };
    vec![
        phase(
            "research",
            "plan retrieval, navigate the repository and point the engine at each source region that bears on the target (add-evidence); the engine reads, classifies and freezes it",
            &["output/evidence.json"],
        ),
        phase(
            "extract",
            "state atomic claims, each with one predicate, one value and the artifact ids that establish it (add-claim); then freeze-research",
            &["output/claims.json"],
        ),
        phase(
            "synthesize",
            "draft the patch from accepted claims only; every patched value must equal the value of an accepted claim",
            &["output/proposal.json"],
        ),
        phase(
            "critique",
            "try to falsify each clause, then run validate: the engine's verdict is authoritative",
            &["output/critique.json"],
        ),
        phase(
            "finalize",
            "record the honest outcome, including a decline when the evidence conflicts or is insufficient",
            &["output/result.json"],
        ),
    ]
}

/// Writes a run into a staging directory, then renames it into place.
/// The manifest of a repository without a commit: every in-scope regular file and its
/// hash now, so evidence read later must be what it held at open (R-GATE-3). The cases
/// directory, when inside the repository, is left out explicitly.
fn record_source(r: &Resolved, cases_dir: &Path) -> Result<SourceManifest, CaseError> {
    let mut exclude = Vec::new();
    if let Ok(cases) = fs::canonicalize(cases_dir) {
        exclude.push(cases);
    } else if let Ok(abs) = std::path::absolute(cases_dir) {
        exclude.push(abs);
    }
    let scopes = super::evidence::Classifier::new(&r.scopes);
    SourceManifest::build(
        &r.repo,
        &|rel| scopes.classify(rel).is_some(),
        &exclude,
        super::evidence::MAX_FILE_BYTES,
    )
    .map_err(CaseError::io("record the contents of", &r.repo))
}

fn materialize(
    case_dir: &Path,
    doc: &CaseDoc,
    manifest: Option<&SourceManifest>,
) -> Result<PathBuf, CaseError> {
    fs::create_dir_all(case_dir).map_err(CaseError::io("create", case_dir))?;
    let run_id = doc.identity.run_id.to_string();
    let staging = case_dir.join(format!(".staging-{run_id}"));
    let final_dir = case_dir.join(&run_id);
    let result = (|| -> Result<(), CaseError> {
        fs::create_dir(&staging).map_err(CaseError::io("create", &staging))?;
        // Nothing reads the staging directory until it is renamed into place: each file is
        // written once (fsynced when durable), then the directory is synced once, so the
        // rename publishes a run whose every entry and byte is already on disk.
        for dir in [WORKSPACE_DIR, OUTPUT_DIR] {
            let path = staging.join(dir);
            fs::create_dir(&path).map_err(CaseError::io("create", path))?;
        }
        let mut case_bytes = serde_json::to_vec_pretty(doc).map_err(|e| CaseError::Corrupt {
            file: staging.join(CASE_JSON),
            field: ".".into(),
            reason: e.to_string(),
        })?;
        case_bytes.push(b'\n');
        let case_hash = crate::canon::bytes_hash(&case_bytes);
        let (case_md, schema) = render_views(doc, &case_hash);
        let write = |name: &str, bytes: &[u8]| {
            let path = staging.join(name);
            fsio::write_new(&path, bytes).map_err(CaseError::io("write", path))
        };
        write(CASE_JSON, &case_bytes)?;
        write(CASE_MD, case_md.as_bytes())?;
        write(SCHEMA_FILE, schema.as_bytes())?;
        let lifecycle = Lifecycle::new(
            doc.identity.run_id.clone(),
            &doc.identity.created_at,
            &case_hash,
        );
        write(
            LIFECYCLE_JSON,
            &lifecycle.to_bytes(&staging.join(LIFECYCLE_JSON))?,
        )?;
        write(JOURNAL, b"")?;
        if let Some(manifest) = manifest {
            // Its canonical JSON, so that the file's bytes (before the newline) hash to the
            // sourceDigest case.json records: a rail checks it with one pass of sha256.
            let mut bytes = manifest.canonical_bytes();
            bytes.push(b'\n');
            write(SOURCE_JSON, &bytes)?;
        }
        fsio::sync_dir(&staging).map_err(CaseError::io("sync", &staging))?;
        if final_dir.exists() {
            return Err(CaseError::Io {
                action: "create",
                path: final_dir.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "run id already taken",
                ),
            });
        }
        fs::rename(&staging, &final_dir).map_err(CaseError::io("publish", &final_dir))?;
        fsio::sync_dir(case_dir).map_err(CaseError::io("sync", case_dir))
    })();
    if let Err(e) = result {
        let _ = fs::remove_dir_all(&staging);
        return Err(e);
    }
    Ok(final_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The brief's search terms: the target's name, each of its words longer than two
    /// letters once, then its operation's id and path.
    #[test]
    fn search_terms_are_the_name_its_longer_words_and_the_operation() {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/payments");
        let tmp = tempfile::tempdir().unwrap();
        // The example's get_payment.payment_id is described; without it describe-field opens.
        let mut air: serde_json::Value =
            serde_json::from_slice(&std::fs::read(example.join("air.json")).unwrap()).unwrap();
        air["operations"][1]["fields"][0]["description"] = serde_json::Value::Null;
        let air_path = tmp.path().join("air.json");
        std::fs::write(&air_path, air.to_string()).unwrap();
        let terms = |skill: &str, target: &str| {
            let opened = open(&OpenRequest::new(
                air_path.clone(),
                example.join("repo"),
                skill,
                target,
                tmp.path().join("cases"),
                "test",
            ))
            .unwrap();
            let case: serde_json::Value =
                serde_json::from_slice(&std::fs::read(opened.run_dir.join("case.json")).unwrap())
                    .unwrap();
            case["context"]["searchTerms"].clone()
        };
        assert_eq!(
            terms("describe-field", "op.get_payment.input.path.payment_id"),
            serde_json::json!([
                "payment_id",
                "payment",
                "get_payment",
                "/payments/{payment_id}"
            ])
        );
        assert_eq!(
            terms(
                "annotate-unit",
                "op.create_payment.input.body.capture_timeout"
            ),
            serde_json::json!([
                "capture_timeout",
                "capture",
                "timeout",
                "create_payment",
                "/payments"
            ])
        );
    }

    /// The method a case hands the agent walks the task's phases in order, and each phase
    /// names the output file it produces, one the task lists.
    #[test]
    fn the_procedure_walks_the_tasks_phases_each_producing_a_listed_output() {
        let tmp = tempfile::tempdir().unwrap();
        let run = crate::case::testing::payments_run(tmp.path(), &[]);
        let case: CaseDoc =
            serde_json::from_slice(&std::fs::read(run.dir().join("case.json")).unwrap()).unwrap();
        let names: Vec<&str> = case
            .procedure
            .phases
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, case.task.phases);
        assert_eq!(
            names,
            ["research", "extract", "synthesize", "critique", "finalize"]
        );
        for phase in &case.procedure.phases {
            assert!(!phase.goal.is_empty(), "{}", phase.name);
            assert_eq!(phase.produces.len(), 1, "{}", phase.name);
            assert!(
                case.task.outputs.contains(&phase.produces[0]),
                "{} produces {:?}, not a task output",
                phase.name,
                phase.produces
            );
        }
    }

    /// A durable open syncs every file of the staged run, then the staging directory
    /// once, before publishing it, then the case directory after the rename.
    #[test]
    fn a_durable_open_syncs_the_staged_run_then_the_case_directory() {
        let tmp = tempfile::tempdir().unwrap();
        crate::fsio::take_synced();
        let run = crate::case::testing::payments_run(tmp.path(), &[]);
        let synced = crate::fsio::take_synced();
        let case_dir = run.dir().parent().unwrap();
        let run_id = run.dir().file_name().unwrap().to_string_lossy();
        let staging = case_dir.join(format!(".staging-{run_id}"));
        let n = synced.len();
        assert!(n >= 2, "{synced:?}");
        assert_eq!(
            (synced[n - 2].as_path(), synced[n - 1].as_path()),
            (staging.as_path(), case_dir),
            "{synced:?}"
        );
        assert_eq!(
            synced.iter().filter(|p| **p == staging).count(),
            1,
            "{synced:?}"
        );
        let files: Vec<_> = std::fs::read_dir(run.dir())
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| e.file_name())
            .collect();
        assert!(files.len() >= 5, "{files:?}");
        for name in files {
            assert!(
                synced[..n - 2].contains(&staging.join(&name)),
                "{name:?} was not synced before the run was published: {synced:?}"
            );
        }
    }

    /// A scope rule is `GLOB=KIND` with a relative glob that stays in the repository and a
    /// kind a scope may assign; each other shape is refused with its reason.
    #[test]
    fn a_scope_rule_that_could_leave_the_repository_is_refused() {
        let scope = parse_scope("src/**/*.py=implementation").unwrap();
        assert_eq!(
            (scope.glob.as_str(), scope.kind),
            ("src/**/*.py", EvidenceKind::Implementation)
        );
        // The last `=` splits: a glob may hold one.
        assert_eq!(parse_scope("a=b/*.md=doc").unwrap().glob, "a=b/*.md");
        for (rule, reason) in [
            ("src/**", "expected GLOB=KIND"),
            ("=doc", "the glob is empty"),
            ("/etc/*=doc", "must be relative"),
            ("~/notes/*=doc", "must be relative"),
            ("docs\\*.md=doc", "must be relative"),
            ("docs/../../*=doc", "through `..`"),
            ("..=doc", "through `..`"),
            ("docs/[=doc", "not a glob"),
            ("docs/*=prose", "unknown evidence kind `prose`"),
            ("docs/*=comment", "derived by the engine"),
        ] {
            match parse_scope(rule) {
                Err(CaseError::BadScope { scope, reason: got }) => {
                    assert_eq!(scope, rule);
                    assert!(got.contains(reason), "{rule}: {got}");
                }
                other => panic!("{rule}: expected a refusal, got {other:?}"),
            }
        }
    }
}
