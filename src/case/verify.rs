//! `case verify`: view drift and run staleness.
//!
//! A view that differs from its regeneration is drift. A run whose identity (AIR hash,
//! source revision, skill version, policy hash) no longer matches the world is stale, and
//! its outputs must never be consumed.

use std::path::Path;

use serde::Serialize;

use super::doc::{CaseDoc, CasePolicy};
use super::error::CaseError;
use super::lifecycle::Lifecycle;
use super::rail::Broken;
use super::run::Run;
use super::views::{CASE_MD, SCHEMA_FILE, render_views};
use crate::air::{Air, KnownAir};
use crate::memo::Memo;
use crate::skill::{Scope, SkillContract, registry};

/// The current world, as far as the caller knows it. `None` skips that comparison.
#[derive(Debug, Clone, Default)]
pub struct Current {
    pub air_hash: Option<String>,
    pub source_revision: Option<String>,
}

pub use super::error::StaleField;

/// Identity fields of `doc` that differ from `current` and from the skill registry.
#[must_use]
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
            let policy = policy_hash(skill, &doc.policy.inspect_scopes);
            check("policyHash", &id.policy_hash, Some(&policy));
        }
    }
    out
}

/// The hash of the registry's `skill` with `scopes`: a pure function of the two, and the
/// registry is embedded, so inside one process it is computed once for each.
fn policy_hash(skill: &'static SkillContract, scopes: &[Scope]) -> String {
    static HASHES: Memo<(String, u32, Vec<Scope>), String> = Memo::new(1024);
    HASHES.get_or((skill.name.clone(), skill.version, scopes.to_vec()), || {
        CasePolicy::build(skill, scopes.to_vec()).hash()
    })
}

/// The world as `air` and `repo` say it is now; `doc` is the run it is compared with,
/// whose record of the AIR file spares parsing bytes it already hashed.
#[must_use]
pub fn current_world(air: &Path, repo: &Path, doc: &CaseDoc) -> Current {
    let id = &doc.identity;
    let air_hash = match &id.air_bytes_hash {
        Some(bytes_hash) => Air::hash_file_known(
            air,
            &KnownAir {
                path: Path::new(&doc.inputs.air),
                bytes_hash,
                air_hash: &id.air_hash,
            },
        ),
        None => Air::hash_file(air),
    };
    Current {
        air_hash: Some(match air_hash {
            Ok(h) => h,
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
    pub tamper: Vec<Broken>,
}

impl VerifyReport {
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.drift.is_empty() && self.stale.is_empty() && self.tamper.is_empty()
    }
}

/// What breaks a run beyond its seal ([`super::rail::check`] comes first): each frozen
/// file against its recorded hash, and — when those hold — each recorded verdict against
/// its re-derivation from the frozen inputs, so a forger who reseals the journal around an
/// edited record is still named.
#[must_use]
pub fn frozen_and_verdicts(run: &Run, lc: &Lifecycle) -> Vec<Broken> {
    let mut out = Vec::new();
    for (rel, frozen) in &lc.frozen {
        let now = super::store::file_hash(&run.dir, rel)
            .unwrap_or(None)
            .unwrap_or_else(|| "(deleted or unreadable)".into());
        if &now != frozen {
            out.push(Broken {
                file: rel.clone(),
                field: ".".into(),
                reason: format!("was frozen as {frozen}, but is now {now}"),
            });
        }
    }
    if out.is_empty() {
        out.extend(rederived(run, lc).err());
    }
    out
}

/// Re-derives stage 1 and the validation record from the frozen inputs, as finalize and
/// close do; a recorded verdict that differs, or cannot be re-derived, is broken.
fn rederived(run: &Run, lc: &Lifecycle) -> Result<(), Broken> {
    super::frozen::rederive(run, lc)
        .map(drop)
        .map_err(|e| match e {
            CaseError::Tampered {
                file,
                field,
                reason,
            } => Broken {
                file,
                field,
                reason,
            },
            other => Broken {
                file: super::layout::LIFECYCLE_JSON.into(),
                field: "records".into(),
                reason: format!("cannot be re-derived from the frozen inputs: {other}"),
            },
        })
}

/// Regenerates the views of `run` and compares them with the files on disk.
///
/// # Errors
///
/// `CaseError::Io` when a view file exists but cannot be read (a symlink or special file
/// included). A missing or differing view is drift, not an error.
pub fn drift(run: &Run) -> Result<Vec<Drift>, CaseError> {
    let (case_md, schema) = render_views(&run.doc, &run.case_hash);
    let mut out = Vec::new();
    for (file, expected) in [(CASE_MD, case_md), (SCHEMA_FILE, schema)] {
        let path = run.dir.join(file);
        match crate::fsio::read_regular(&path, super::layout::MAX_RUN_FILE_BYTES) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::testing::payments_run;

    /// Open records the sha256 of the AIR bytes it parsed. The current AIR hash of those
    /// bytes is then the recorded one, taken from the record without a parse (a stand-in
    /// recorded hash shows it); other bytes, or a run recorded without the bytes hash,
    /// are parsed.
    #[test]
    fn the_air_hash_of_the_bytes_open_read_comes_from_the_record() {
        let tmp = tempfile::tempdir().unwrap();
        let run = payments_run(tmp.path(), &[]);
        let doc = run.doc().clone();
        let air = Path::new(&doc.inputs.air);
        let repo = Path::new(&doc.inputs.repository);
        let bytes = std::fs::read(air).unwrap();
        assert_eq!(
            doc.identity.air_bytes_hash,
            Some(crate::canon::bytes_hash(&bytes))
        );
        let mut stand_in = doc.clone();
        stand_in.identity.air_hash = "sha256:stand-in".into();
        assert_eq!(
            current_world(air, repo, &stand_in).air_hash.as_deref(),
            Some("sha256:stand-in")
        );
        let edited = tmp.path().join("air.json");
        let text = String::from_utf8(bytes).unwrap();
        std::fs::write(&edited, text.replacen("Amount to charge.", "Amount.", 1)).unwrap();
        let parsed = Air::load(&edited).unwrap().hash();
        assert_ne!(parsed, doc.identity.air_hash);
        assert_eq!(
            current_world(&edited, repo, &stand_in).air_hash,
            Some(parsed)
        );
        stand_in.identity.air_bytes_hash = None;
        assert_eq!(
            current_world(air, repo, &stand_in).air_hash,
            Some(doc.identity.air_hash)
        );
    }
}
