//! Where evidence comes from (R-GATE-3): the repository as committed at the case's source
//! revision, or the manifest a repository without a commit had at open — never the cases
//! dir, the workspace, an uncommitted edit or anything written after open.

use libtest_mimic::Failed;

use crate::support::{UNIT_TARGET, World, add_ev, failed, out, read_json, write_json};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "provenance::a_workspace_file_under_a_cases_dir_inside_the_repository_is_refused",
            rules: &["R-GATE-3"],
            run: cases_dir_inside,
        },
        Check {
            name: "provenance::an_uncommitted_edit_is_not_evidence_the_committed_text_is",
            rules: &["R-GATE-3"],
            run: dirty_worktree,
        },
        Check {
            name: "provenance::a_file_never_committed_is_refused_as_not_committed",
            rules: &["R-GATE-3"],
            run: untracked,
        },
        Check {
            name: "provenance::without_git_a_file_changed_after_open_is_refused",
            rules: &["R-GATE-3"],
            run: changed_after_open,
        },
        Check {
            name: "provenance::without_git_a_file_created_after_open_is_refused",
            rules: &["R-GATE-3"],
            run: created_after_open,
        },
        Check {
            name: "provenance::an_edited_source_manifest_is_tamper",
            rules: &["R-GATE-3"],
            run: forged_manifest,
        },
        Check {
            name: "provenance::the_source_manifest_is_the_canonical_json_its_digest_names",
            rules: &["R-GATE-3"],
            run: manifest_bytes,
        },
    ]
}

fn kind_of<T: std::fmt::Debug>(
    r: Result<T, anvil_bench::case::CaseError>,
) -> Result<String, Failed> {
    match r {
        Ok(v) => Err(format!("accepted: {v:?}").into()),
        Err(e) => Ok(e.kind().to_string()),
    }
}

fn cases_dir_inside() -> Result<(), Failed> {
    let w = World::new();
    // The cases dir sits inside an inspect scope of the repository.
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.cases_dir = w.repo().join("docs/.cases");
    let opened = anvil_bench::case::open(&req).map_err(failed)?;
    let note = opened.run_dir.join("workspace/note.md");
    std::fs::write(&note, "The amount is in seconds.\n").unwrap();
    let rel = note
        .strip_prefix(w.repo().canonicalize().unwrap())
        .or_else(|_| note.strip_prefix(w.repo()))
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let kind = kind_of(add_ev(&opened.run_dir, &rel, None))?;
    ensure!(
        kind == "inside_a_run" || kind == "inside_cases_dir",
        "a workspace note was refused as {kind}"
    );
    // Outside every run but inside the cases dir: the exclusion itself refuses it.
    std::fs::write(
        req.cases_dir.join("planted.md"),
        "The amount is in cents.\n",
    )
    .unwrap();
    let kind = kind_of(add_ev(&opened.run_dir, "docs/.cases/planted.md", None))?;
    ensure!(
        kind == "inside_cases_dir",
        "a file in the cases dir was refused as {kind}"
    );
    ensure!(
        !out(&opened.run_dir, "evidence.json").exists(),
        "a refused note wrote evidence"
    );
    Ok(())
}

fn dirty_worktree() -> Result<(), Failed> {
    let w = World::new();
    w.git_init();
    let opened = w.open_unit()?;
    let doc = w.repo().join("docs/payments.md");
    let committed = std::fs::read_to_string(&doc).unwrap();
    let dirty = committed.replacen('\n', " The timeout is in milliseconds.\n", 1);
    std::fs::write(&doc, &dirty).unwrap();
    let a = add_ev(&opened.run_dir, "docs/payments.md", Some((1, 1))).map_err(failed)?;
    let first = committed.split_inclusive('\n').next().unwrap_or_default();
    ensure!(
        a.excerpt == first,
        "the excerpt is {:?}, not the committed line {first:?}",
        a.excerpt
    );
    ensure!(
        !a.excerpt.contains("milliseconds"),
        "uncommitted text became evidence"
    );
    Ok(())
}

fn untracked() -> Result<(), Failed> {
    let w = World::new();
    w.git_init();
    let opened = w.open_unit()?;
    std::fs::write(w.repo().join("docs/late.md"), "Amounts are in cents.\n").unwrap();
    let kind = kind_of(add_ev(&opened.run_dir, "docs/late.md", None))?;
    ensure!(
        kind == "not_committed",
        "an untracked file was refused as {kind}"
    );
    Ok(())
}

fn changed_after_open() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let doc = w.repo().join("docs/payments.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    std::fs::write(&doc, format!("{text}The timeout is in milliseconds.\n")).unwrap();
    let kind = kind_of(add_ev(&opened.run_dir, "docs/payments.md", Some((1, 1))))?;
    ensure!(
        kind == "changed_since_open",
        "an edited file was refused as {kind}"
    );
    Ok(())
}

fn created_after_open() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    std::fs::write(w.repo().join("docs/late.md"), "Amounts are in cents.\n").unwrap();
    let kind = kind_of(add_ev(&opened.run_dir, "docs/late.md", None))?;
    ensure!(kind == "not_at_open", "a new file was refused as {kind}");
    Ok(())
}

fn forged_manifest() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    // The agent adds its own note to the manifest so the note would pass as "at open".
    std::fs::write(w.repo().join("docs/late.md"), "Amounts are in cents.\n").unwrap();
    let path = opened.run_dir.join("source.json");
    let mut manifest = read_json(&path);
    manifest["files"]["docs/late.md"] =
        serde_json::json!(anvil_bench::canon::bytes_hash(b"Amounts are in cents.\n"));
    write_json(&path, &manifest);
    let kind = kind_of(add_ev(&opened.run_dir, "docs/late.md", None))?;
    ensure!(kind == "tamper", "a forged manifest was refused as {kind}");
    Ok(())
}

/// source.json holds the canonical JSON whose sha256 case.json records as `sourceDigest`
/// (a newline after it), so anyone can check it with `sha256sum`. The same manifest in
/// another layout (as runs opened before this wrote it) is still read, by the strict path;
/// one that repeats a key is refused by name even where the last value would restore the
/// recorded one.
fn manifest_bytes() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let path = opened.run_dir.join("source.json");
    let bytes = std::fs::read(&path)?;
    let recorded = read_json(&opened.run_dir.join("case.json"))["identity"]["sourceDigest"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let body = bytes
        .strip_suffix(b"\n")
        .ok_or("source.json does not end with a newline")?;
    ensure!(
        anvil_bench::canon::bytes_hash(body) == recorded,
        "source.json's bytes do not hash to the recorded sourceDigest {recorded}"
    );
    ensure!(
        !body.contains(&b'\n') && body.starts_with(b"{\"files\":{"),
        "source.json is not canonical JSON"
    );
    let manifest = read_json(&path);
    write_json(&path, &manifest);
    ensure!(
        std::fs::read(&path)? != bytes,
        "test setup: the re-laid-out manifest is byte-identical"
    );
    add_ev(&opened.run_dir, "src/payments/service.py", Some((32, 39))).map_err(failed)?;
    // A repeated key whose second value is the recorded one: the parsed map equals the
    // recorded manifest, but the document is not one the engine wrote.
    let text = String::from_utf8(bytes)?;
    let repeated = text.replacen(
        "{\"files\":{",
        "{\"files\":{\"src/payments/service.py\":\"sha256:forged\",",
        1,
    );
    std::fs::write(&path, repeated)?;
    let refused = add_ev(&opened.run_dir, "src/payments/service.py", Some((32, 39)));
    ensure!(
        matches!(&refused, Err(e) if e.to_string().contains("source.json")),
        "a manifest repeating a key was accepted: {refused:?}"
    );
    Ok(())
}
