//! What a run may cite: the repository as its source revision holds it (R-GATE-3), never
//! a file inside a run; and, at freeze, every artifact acquired again from there.

use std::path::Path;

use super::error::CaseError;
use super::evidence::{EvidenceArtifact, EvidenceDoc, EvidenceRequest, Source, acquire};
use super::layout::{CASE_JSON, LIFECYCLE_JSON, MAX_RUN_FILE_BYTES, SOURCE_JSON};
use super::run::Run;
use crate::repo::digest::{Recorded, SourceManifest};

/// The repository as this run may cite it (R-GATE-3): the blobs committed at its source
/// revision, or, without a commit, the manifest recorded at open (`source.json`, bound to
/// case.json by `sourceDigest`). A cases directory inside the repository is excluded.
///
/// # Errors
///
/// `CaseError::Evidence` of kind `repository` when the recorded source revision is a commit
/// id that cannot be opened in the repository's git objects. For an uncommitted source, the
/// refusals of reading `source.json`: `Io` when it cannot be read, `Corrupt` when it does
/// not parse, and `Tampered` when case.json records no `sourceDigest`, the file is not
/// UTF-8, or its digest differs from the recorded one.
pub fn evidence_source(run: &Run) -> Result<Source, CaseError> {
    let repo = Path::new(&run.doc.inputs.repository);
    let revision = &run.doc.identity.source_revision;
    let source = if crate::repo::committed::is_commit_id(revision) {
        Source::committed(repo, revision)?
    } else {
        let manifest = load_manifest(run)?;
        Source::digested(revision, manifest)
    };
    Ok(match cases_dir_inside(run) {
        Some(dir) => source.excluding(dir),
        None => source,
    })
}

/// The run's cases directory when it lies inside the repository (canonical).
fn cases_dir_inside(run: &Run) -> Option<std::path::PathBuf> {
    let repo = std::fs::canonicalize(&run.doc.inputs.repository).ok()?;
    let run_dir = std::fs::canonicalize(&run.dir).ok()?;
    let cases = run_dir.parent()?.parent()?.to_path_buf();
    cases.starts_with(&repo).then_some(cases)
}

fn load_manifest(run: &Run) -> Result<Recorded, CaseError> {
    let Some(recorded) = &run.doc.identity.source_digest else {
        return Err(CaseError::Tampered {
            file: SOURCE_JSON.into(),
            field: ".".into(),
            reason: "case.json records no sourceDigest for a repository without a commit".into(),
        });
    };
    read_manifest(&run.dir, recorded)
}

/// What is wrong with the run's `source.json` against the `sourceDigest` case.json
/// records, as (field, reason); `None` when it is what open wrote. Every rail and
/// `case verify` check this with the rest of the seal, not only the rails that read it.
pub(super) fn manifest_broken(run_dir: &Path, recorded: &str) -> Option<(String, String)> {
    match read_manifest(run_dir, recorded) {
        Ok(_) => None,
        Err(
            CaseError::Tampered { field, reason, .. } | CaseError::Corrupt { field, reason, .. },
        ) => Some((field, reason)),
        Err(CaseError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Some((".".into(), "missing".into()))
        }
        Err(e) => Some((".".into(), e.to_string())),
    }
}

/// `source.json` of the run at `run_dir`, refused unless it hashes to `recorded`.
fn read_manifest(run_dir: &Path, recorded: &str) -> Result<Recorded, CaseError> {
    let path = run_dir.join(SOURCE_JSON);
    let tampered = |reason: String| CaseError::Tampered {
        file: SOURCE_JSON.into(),
        field: ".".into(),
        reason,
    };
    let mut bytes = crate::fsio::read_regular(&path, MAX_RUN_FILE_BYTES)
        .map_err(CaseError::io("read", &path))?;
    // Open writes the manifest's canonical JSON and a newline. Bytes that hash to the
    // recorded digest are that JSON (sha256 admits no other), so they hold no repeated key
    // and fit the type: they are searched as they are, for the one path a rail reads.
    // Anything else (a run written before source.json was canonical, or an edited file)
    // takes the strict path below.
    let canonical = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    if crate::canon::bytes_hash(canonical) == recorded {
        bytes.truncate(canonical.len());
        return Ok(Recorded::verified_json(bytes));
    }
    let text = std::str::from_utf8(&bytes).map_err(|_| tampered("is not UTF-8".into()))?;
    let manifest: SourceManifest =
        crate::json_path::from_str(text).map_err(|e| CaseError::Corrupt {
            file: path.clone(),
            field: e.path,
            reason: e.message,
        })?;
    let digest = manifest.digest();
    if digest != recorded {
        return Err(tampered(format!(
            "hashes to {digest}, but case.json's sourceDigest records {recorded}"
        )));
    }
    Ok(manifest.into())
}

/// Refuses a repository path that lies inside a run directory — this run's workspace or
/// output, or any run of a cases dir kept inside the repository (the default
/// `.refinement/cases` is): what a run holds was written by an agent or by the engine and
/// is never a source. A path that does not resolve is left to `acquire` to name.
///
/// # Errors
///
/// `CaseError::Rail` of kind `inside_a_run` (for rail `rail`) when `path` resolves to a
/// file inside this run's directory or inside any other run directory within the
/// repository. A path that does not resolve is not refused here.
pub fn outside_every_run(run: &Run, rail: &'static str, path: &str) -> Result<(), CaseError> {
    let repo = Path::new(&run.doc.inputs.repository);
    let (Ok((_, abs)), Ok(root)) = (
        super::evidence::resolve_path(repo, path),
        std::fs::canonicalize(repo),
    ) else {
        return Ok(());
    };
    let own = std::fs::canonicalize(&run.dir).ok();
    let is_run = |d: &Path| {
        own.as_deref() == Some(d)
            || (d.join(CASE_JSON).is_file() && d.join(LIFECYCLE_JSON).is_file())
    };
    let inside = abs
        .ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(&root))
        .find(|d| is_run(d));
    match inside {
        None => Ok(()),
        Some(dir) => Err(CaseError::Rail {
            rail,
            kind: "inside_a_run",
            reason: format!(
                "`{path}` lies inside the run directory `{}`: what a run holds is written by an agent or the engine, never read as evidence",
                dir.display()
            ),
        }),
    }
}

/// How an artifact acquired again at its coordinate differs from the recorded one, naming
/// the first field that differs (kind, uri, id, verification); `None` when none does.
fn first_difference(again: &EvidenceArtifact, recorded: &EvidenceArtifact) -> Option<String> {
    if again.kind != recorded.kind {
        Some(format!(
            "kind {} there, {} recorded",
            again.kind, recorded.kind
        ))
    } else if again.uri != recorded.uri {
        Some(format!(
            "`{}` there, `{}` recorded",
            again.uri, recorded.uri
        ))
    } else if again.id != recorded.id {
        Some(format!("id `{}` there", again.id))
    } else if again.verification != recorded.verification {
        Some(format!(
            "verification {:?} there, {:?} recorded",
            again.verification, recorded.verification
        ))
    } else {
        None
    }
}

/// Every artifact in evidence.json must be what the engine would have produced: a local
/// artifact's coordinate is acquired again — bytes, hash, kind (from the scopes) and id
/// must all match — and an external one must be unverified with an id derived from its
/// coordinate. A hand-written "verified" excerpt or a relabelled kind cannot survive.
///
/// # Errors
///
/// `CaseError::Rail` of kind `forged_artifact` when an artifact's id does not derive from
/// its coordinate, a local artifact cannot be acquired again or reads back with another
/// kind, id, verification or uri, or an external artifact claims to be verified or has an
/// inadmissible kind; `inside_a_run` when a local artifact's path lies in a run directory;
/// `CaseError::Evidence` from re-verifying a local artifact (`source_changed`,
/// `missing_file`, `inconsistent_artifact`, ...); and the errors of [`evidence_source`].
pub fn verify_artifacts(run: &Run, evidence: &EvidenceDoc) -> Result<(), CaseError> {
    let repo = Path::new(&run.doc.inputs.repository);
    let policy = &run.doc.policy;
    let source = evidence_source(run)?;
    let forged = |id: &str, why: String| CaseError::Rail {
        rail: "freeze-research",
        kind: "forged_artifact",
        reason: format!("artifact `{id}` {why}"),
    };
    for a in &evidence.artifacts {
        if a.expected_id().as_deref() != Some(a.id.as_str()) {
            return Err(forged(&a.id, "does not derive from its coordinate".into()));
        }
        if a.is_local() {
            outside_every_run(
                run,
                "freeze-research",
                a.path.as_deref().unwrap_or_default(),
            )?;
            // A changed source is reported as such before anything else.
            super::evidence::reverify(repo, &source, a)?;
            let req = EvidenceRequest {
                path: a.path.clone().unwrap_or_default(),
                start_line: a.start_line,
                end_line: a.end_line,
            };
            let again = acquire(
                repo,
                &source,
                &policy.inspect_scopes,
                &policy.contract.admissible_kinds,
                &req,
                &a.acquired_at,
            )
            .map_err(|e| forged(&a.id, format!("cannot be acquired again: {e}")))?;
            if let Some(difference) = first_difference(&again, a) {
                return Err(forged(
                    &a.id,
                    format!("is not what the engine reads at its coordinate ({difference})"),
                ));
            }
        } else if a.is_verified() {
            return Err(forged(
                &a.id,
                "is external but claims to be verified".into(),
            ));
        } else if !policy.contract.admissible_kinds.contains(&a.kind) {
            return Err(forged(&a.id, format!("is of inadmissible kind {}", a.kind)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::evidence::Verification;
    use crate::skill::EvidenceKind;

    fn artifact() -> EvidenceArtifact {
        EvidenceArtifact {
            id: "ev-1".into(),
            uri: "repo:src/a.py#L1-L2".into(),
            kind: EvidenceKind::Implementation,
            revision: None,
            path: Some("src/a.py".into()),
            start_line: Some(1),
            end_line: Some(2),
            source: None,
            content_hash: String::new(),
            excerpt: String::new(),
            acquired_at: String::new(),
            verification: Verification::Verified {
                verifier: "engine".into(),
            },
        }
    }

    /// The forged-artifact message names the field that differs, not always the kinds.
    #[test]
    fn the_first_differing_field_is_the_one_named() {
        let recorded = artifact();
        assert_eq!(first_difference(&artifact(), &recorded), None);
        let mut again = artifact();
        again.uri = "repo:src/b.py#L1-L2".into();
        assert_eq!(
            first_difference(&again, &recorded).as_deref(),
            Some("`repo:src/b.py#L1-L2` there, `repo:src/a.py#L1-L2` recorded")
        );
        again.kind = EvidenceKind::Doc;
        assert_eq!(
            first_difference(&again, &recorded).as_deref(),
            Some("kind doc there, implementation recorded")
        );
        let mut again = artifact();
        again.id = "ev-2".into();
        assert_eq!(
            first_difference(&again, &recorded).as_deref(),
            Some("id `ev-2` there")
        );
        let mut again = artifact();
        again.verification = Verification::Unverified { reason: "x".into() };
        assert!(first_difference(&again, &recorded).is_some_and(|d| d.starts_with("verification")));
    }
}
