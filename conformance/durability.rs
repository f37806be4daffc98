//! R-ID-10 against readers: a document the engine rewrites in an existing run
//! (evidence.json, claims.json, lifecycle.json) or outside it (the AIR `close --apply`
//! writes) is replaced whole, never rewritten in place. A reader part-way through a file
//! keeps reading the version it opened, and readers racing the rails only ever see whole
//! JSON documents.
//!
//! The held-reader trials are deterministic: an in-place write (truncate, then write) shows
//! through an open file descriptor on every run, where a timing race would only sometimes.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::rails;
use crate::support::rails::close;
use crate::support::rails::finalize;
use anvil_bench::case::evidence::EvidenceRequest;
use anvil_bench::reconcile::CloseRequest;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{
    World, claim, ev, failed, freeze, frozen_unit, out, unit_proposal, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "durability::a_reader_part_way_through_a_run_document_keeps_the_version_it_opened_while_rails_rewrite_it",
            rules: &["R-ID-10"],
            run: held_readers_of_run_documents,
        },
        Check {
            name: "durability::readers_racing_rails_never_see_a_partial_or_missing_run_document",
            rules: &["R-ID-10"],
            run: readers_race_rails,
        },
        Check {
            name: "durability::a_reader_part_way_through_the_air_keeps_the_version_it_opened_while_close_applies_over_it",
            rules: &["R-ID-10"],
            run: held_reader_of_applied_air,
        },
    ]
}

/// A reader that opened `path` and has read the first half of it.
struct Held {
    path: PathBuf,
    file: File,
    opened: Vec<u8>,
    head: Vec<u8>,
}

fn hold(path: &Path) -> Result<Held, Failed> {
    let opened = std::fs::read(path)?;
    let mut file = File::open(path)?;
    let mut head = vec![0; opened.len() / 2];
    file.read_exact(&mut head)?;
    Ok(Held {
        path: path.to_path_buf(),
        file,
        opened,
        head,
    })
}

impl Held {
    /// Reads the rest: the reader must end with exactly the version it opened, while the
    /// path now holds another (else the trial proves nothing).
    fn finish(mut self, what: &str) -> Result<(), Failed> {
        let mut whole = std::mem::take(&mut self.head);
        self.file.read_to_end(&mut whole)?;
        let now = std::fs::read(&self.path)?;
        ensure!(
            now != self.opened,
            "test setup: {what} did not rewrite `{}`",
            self.path.display()
        );
        ensure!(
            whole == self.opened,
            "a reader part-way through `{}` when {what} rewrote it read {} bytes that {}",
            self.path.display(),
            whole.len(),
            if serde_json::from_slice::<Value>(&whole).is_ok() {
                "are not the version it opened"
            } else {
                "are not a JSON document (half of one version, half of another)"
            }
        );
        Ok(())
    }
}

/// Every rail that rewrites a run document, each with a reader holding that document.
fn held_readers_of_run_documents() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let evidence = out(&run, "evidence.json");
    let claims = out(&run, "claims.json");
    let lifecycle = run.join("lifecycle.json");

    let implementation = ev(&run, "src/payments/service.py", 32, 39)?;
    let reader = hold(&evidence)?;
    let test = ev(&run, "tests/test_capture.py", 6, 8)?;
    reader.finish("add-evidence")?;

    let first = claim(&run, "field.unit", json!("s"), &[&implementation])?;
    let reader = hold(&claims)?;
    let second = claim(&run, "field.unit", json!("s"), &[&test])?;
    reader.finish("add-claim")?;

    let reader = hold(&lifecycle)?;
    freeze(&run)?;
    reader.finish("freeze-research")?;

    write_proposal(&run, &unit_proposal("s", &[&first, &second]));
    let reader = hold(&lifecycle)?;
    rails::validate(&run, None, false).map_err(failed)?;
    reader.finish("validate")?;

    let reader = hold(&lifecycle)?;
    finalize(&run, None, None, None).map_err(failed)?;
    reader.finish("finalize")?;

    let reader = hold(&lifecycle)?;
    close(&run, &CloseRequest::default(), None).map_err(failed)?;
    reader.finish("close")
}

/// Readers spin on the run's documents while rails rewrite them: every read is a whole
/// JSON document, and a document that has appeared never disappears.
fn readers_race_rails() -> Result<(), Failed> {
    const DOCS: [&str; 3] = [
        "output/evidence.json",
        "output/claims.json",
        "lifecycle.json",
    ];
    let w = World::new();
    w.git_init();
    let run = w.open_unit()?.run_dir;
    let done = AtomicBool::new(false);
    let read = |run: &Path| -> (usize, Vec<String>) {
        let mut reads = 0;
        let mut seen = [false; DOCS.len()];
        let mut problems = Vec::new();
        while !done.load(Ordering::Acquire) && problems.len() < 5 {
            for (i, doc) in DOCS.iter().enumerate() {
                match std::fs::read(run.join(doc)) {
                    Ok(bytes) => {
                        seen[i] = true;
                        reads += 1;
                        if let Err(e) = serde_json::from_slice::<Value>(&bytes) {
                            problems.push(format!("`{doc}` read as {} bytes: {e}", bytes.len()));
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound && !seen[i] => {}
                    Err(e) => problems.push(format!("`{doc}` could not be read: {e}")),
                }
            }
        }
        (reads, problems)
    };
    let (wrote, observed) = std::thread::scope(|s| {
        let readers: Vec<_> = (0..2).map(|_| s.spawn(|| read(&run))).collect();
        let wrote = rewrite_everything(&run);
        done.store(true, Ordering::Release);
        let observed: Vec<(usize, Vec<String>)> =
            readers.into_iter().map(|r| r.join().unwrap()).collect();
        (wrote, observed)
    });
    wrote?;
    let reads: usize = observed.iter().map(|(n, _)| n).sum();
    let problems: Vec<&String> = observed.iter().flat_map(|(_, p)| p).collect();
    ensure!(
        problems.is_empty(),
        "readers racing the rails saw {problems:?}"
    );
    ensure!(reads > 0, "the readers read nothing");
    Ok(())
}

/// Rails that rewrite evidence.json (48 times, growing), claims.json (16 times) and
/// lifecycle.json (freeze, validate, finalize).
fn rewrite_everything(run: &Path) -> Result<(), Failed> {
    let mut ids = Vec::new();
    for end in 2..50 {
        let req = EvidenceRequest {
            path: "src/payments/service.py".into(),
            start_line: Some(1),
            end_line: Some(end),
        };
        ids.push(rails::add_evidence(run, &req, None).map_err(failed)?.id);
    }
    let mut claims = Vec::new();
    for id in ids.iter().take(16) {
        claims.push(claim(run, "field.unit", json!("s"), &[id])?);
    }
    freeze(run)?;
    let refs: Vec<&str> = claims.iter().map(String::as_str).collect();
    write_proposal(run, &unit_proposal("s", &refs));
    rails::validate(run, None, false).map_err(failed)?;
    finalize(run, None, None, None).map_err(failed)?;
    Ok(())
}

/// `close --apply` onto an existing AIR file (an earlier apply's output): a reader
/// part-way through it keeps the version it opened.
fn held_reader_of_applied_air() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    finalize(&u.run, None, None, None).map_err(failed)?;
    let patched = w.root().join("patched.json");
    std::fs::copy(w.air(), &patched)?;
    let reader = hold(&patched)?;
    let doc = close(
        &u.run,
        &CloseRequest {
            apply: Some(patched.clone()),
            approved_by: None,
        },
        None,
    )
    .map_err(failed)?;
    ensure!(
        doc.applied.is_some(),
        "test setup: close did not apply ({:?})",
        doc.tier
    );
    reader.finish("close --apply")
}
