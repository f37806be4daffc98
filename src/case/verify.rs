//! `case verify`: view drift and run staleness.
//!
//! A view that differs from its regeneration is drift. A run whose identity (AIR hash,
//! source revision, skill version, policy hash) no longer matches the world is stale, and
//! its outputs must never be consumed.

use std::fmt;
use std::path::Path;

use serde::Serialize;

use super::doc::{CaseDoc, CasePolicy};
use super::error::CaseError;
use super::run::Run;
use super::views::{CASE_MD, SCHEMA_FILE, render_views};
use crate::air::Air;
use crate::skill::registry;

/// The current world, as far as the caller knows it. `None` skips that comparison.
#[derive(Debug, Clone, Default)]
pub struct Current {
    pub air_hash: Option<String>,
    pub source_revision: Option<String>,
}

/// One identity field that no longer matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleField {
    pub field: &'static str,
    pub recorded: String,
    pub current: String,
}

impl fmt::Display for StaleField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} was {} and is now {}",
            self.field, self.recorded, self.current
        )
    }
}

/// Identity fields of `doc` that differ from `current` and from the skill registry.
pub fn staleness(doc: &CaseDoc, current: &Current) -> Vec<StaleField> {
    let id = &doc.identity;
    let mut out = Vec::new();
    let mut check = |field: &'static str, recorded: &str, now: Option<&str>| {
        if let Some(now) = now
            && now != recorded
        {
            out.push(StaleField {
                field,
                recorded: recorded.to_string(),
                current: now.to_string(),
            });
        }
    };
    check("airHash", &id.air_hash, current.air_hash.as_deref());
    check(
        "sourceRevision",
        &id.source_revision,
        current.source_revision.as_deref(),
    );
    match registry().get(&id.skill) {
        None => check(
            "skillVersion",
            &id.skill_version.to_string(),
            Some("(skill no longer exists)"),
        ),
        Some(skill) => {
            check(
                "skillVersion",
                &id.skill_version.to_string(),
                Some(&skill.version.to_string()),
            );
            let policy = CasePolicy::build(skill, doc.policy.inspect_scopes.clone()).hash();
            check("policyHash", &id.policy_hash, Some(&policy));
        }
    }
    out
}

/// The world as `air` and `repo` say it is now.
pub fn current_world(air: &Path, repo: &Path) -> Current {
    Current {
        air_hash: Some(match Air::load(air) {
            Ok(a) => a.hash(),
            Err(e) => format!("(unreadable: {e})"),
        }),
        source_revision: Some(if repo.is_dir() {
            crate::repo::revision(repo)
        } else {
            format!("(`{}` is not a directory)", repo.display())
        }),
    }
}

/// One generated view that does not match its regeneration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    pub file: &'static str,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    pub format: &'static str,
    pub format_version: u32,
    pub run: String,
    pub case_key: String,
    pub run_id: String,
    pub drift: Vec<Drift>,
    pub stale: Vec<StaleField>,
    /// Engine-owned files that disagree with the journal's seal or their frozen hash.
    pub tamper: Vec<super::rail::Broken>,
}

impl VerifyReport {
    pub fn is_clean(&self) -> bool {
        self.drift.is_empty() && self.stale.is_empty() && self.tamper.is_empty()
    }
}

/// Every sign of tampering in the run: the seal ([`super::rail::check`], which first
/// completes an interrupted rail), each frozen file against its recorded hash, and — when
/// both hold — each recorded verdict against its re-derivation from the frozen inputs, so
/// a forger who reseals the journal around an edited record is still named.
pub fn tamper(run_dir: &Path) -> Result<Vec<super::rail::Broken>, CaseError> {
    let mut out = super::rail::check(run_dir)?;
    if let Ok(lc) = super::lifecycle::Lifecycle::load(run_dir) {
        for (rel, frozen) in &lc.frozen {
            let now = super::store::file_hash(run_dir, rel)
                .unwrap_or(None)
                .unwrap_or_else(|| "(deleted or unreadable)".into());
            if &now != frozen {
                out.push(super::rail::Broken {
                    file: rel.clone(),
                    field: ".".into(),
                    reason: format!("was frozen as {frozen}, but is now {now}"),
                });
            }
        }
        if out.is_empty() {
            out.extend(rederived(run_dir, &lc).err());
        }
    }
    Ok(out)
}

/// Re-derives stage 1 and the validation record from the frozen inputs, as finalize and
/// close do; a recorded verdict that differs, or cannot be re-derived, is broken.
fn rederived(run_dir: &Path, lc: &super::lifecycle::Lifecycle) -> Result<(), super::rail::Broken> {
    let again = || -> Result<(), CaseError> {
        let run = Run::load(run_dir)?;
        super::rails::rederive(&run, lc).map(drop)
    };
    again().map_err(|e| match e {
        CaseError::Tampered {
            file,
            field,
            reason,
        } => super::rail::Broken {
            file,
            field,
            reason,
        },
        other => super::rail::Broken {
            file: super::run::LIFECYCLE_JSON.into(),
            field: "records".into(),
            reason: format!("cannot be re-derived from the frozen inputs: {other}"),
        },
    })
}

/// Regenerates the views of `run` and compares them with the files on disk.
pub fn drift(run: &Run) -> Result<Vec<Drift>, CaseError> {
    let (case_md, schema) = render_views(&run.doc, &run.case_hash);
    let mut out = Vec::new();
    for (file, expected) in [(CASE_MD, case_md), (SCHEMA_FILE, schema)] {
        let path = run.dir.join(file);
        match crate::fsio::read_regular(&path, super::store::MAX_RUN_FILE_BYTES) {
            Ok(bytes) if bytes == expected.as_bytes() => {}
            Ok(_) => out.push(Drift {
                file,
                reason: "differs from its regeneration from case.json".into(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => out.push(Drift {
                file,
                reason: "missing".into(),
            }),
            Err(e) => return Err(CaseError::io("read", path)(e)),
        }
    }
    Ok(out)
}

/// `case verify`: drift of the views, and staleness against `air`/`repo` (defaulting to
/// the inputs recorded in case.json).
pub fn verify(
    run_dir: &Path,
    air: Option<&Path>,
    repo: Option<&Path>,
) -> Result<VerifyReport, CaseError> {
    let run = Run::load(run_dir)?;
    let air = air
        .map(Path::to_path_buf)
        .unwrap_or_else(|| run.doc.inputs.air.clone().into());
    let repo = repo
        .map(Path::to_path_buf)
        .unwrap_or_else(|| run.doc.inputs.repository.clone().into());
    let current = current_world(&air, &repo);
    Ok(VerifyReport {
        format: "anvil-verify",
        format_version: 1,
        run: run.dir.display().to_string(),
        case_key: run.doc.identity.case_key.to_string(),
        run_id: run.doc.identity.run_id.to_string(),
        drift: drift(&run)?,
        stale: staleness(&run.doc, &current),
        tamper: tamper(run_dir)?,
    })
}
