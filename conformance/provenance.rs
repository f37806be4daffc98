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
