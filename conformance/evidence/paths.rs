//! R-EV-2..5: refused coordinates (absolute paths, `..` escapes, symlinks leaving the
//! repository, paths outside every inspect scope, files that are not readable text, bad
//! line ranges), each named in the refusal and leaving output/ byte-identical.

use libtest_mimic::Failed;

use crate::ensure;
use crate::support::{
    UNIT_TARGET, World, add_ev, ev, failed, out, rail_cli, read_json, refused_as, stderr, stdout,
    tree,
};

/// Opens the unit case on a world prepared by `setup` (which returns the path to request),
/// deposits one good artifact, then asks for the bad coordinate: it must be refused with
/// `kind`, the message must name the path, and output/ must be byte-identical.
pub(super) fn refused_path(
    setup: impl FnOnce(&World) -> String,
    lines: Option<(u32, u32)>,
    kind: &str,
) -> Result<(), Failed> {
    let w = World::new();
    let path = setup(&w);
    let run = w.open_unit()?.run_dir;
    ev(&run, "docs/payments.md", 3, 4)?;
    let before = tree(&run.join("output"));
    let e = refused_as(add_ev(&run, &path, lines), kind)?;
    let shown = path.trim_start_matches("./");
    ensure!(
        e.to_string().contains(shown) || e.to_string().contains(&path),
        "the refusal does not name `{path}`: {e}"
    );
    ensure!(
        tree(&run.join("output")) == before,
        "a refused coordinate changed output/"
    );
    let doc = read_json(&out(&run, "evidence.json"));
    ensure!(
        doc["artifacts"].as_array().map(Vec::len) == Some(1),
        "evidence.json gained or lost artifacts: {doc}"
    );
    Ok(())
}

pub(super) fn symlink_inside_canonical() -> Result<(), Failed> {
    let w = World::new();
    std::os::unix::fs::symlink("payments.md", w.repo().join("docs/alias.md")).unwrap();
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "docs/alias.md", Some((3, 4))).map_err(failed)?;
    ensure!(
        a.path.as_deref() == Some("docs/payments.md"),
        "a symlink inside the repository was recorded as {:?}, not its canonical path",
        a.path
    );
    Ok(())
}

pub(super) fn outside_custom_scopes() -> Result<(), Failed> {
    let w = World::new();
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.scopes = vec!["src/**=implementation".into()];
    let run = anvil_bench::case::open(&req).map_err(failed)?.run_dir;
    ev(&run, "src/payments/service.py", 32, 39)?;
    let before = tree(&run.join("output"));
    let e = refused_as(
        add_ev(&run, "docs/payments.md", Some((3, 4))),
        "out_of_scope",
    )?;
    ensure!(
        e.to_string().contains("docs/payments.md"),
        "refusal does not name the path: {e}"
    );
    ensure!(tree(&run.join("output")) == before, "output/ changed");
    Ok(())
}

pub(super) fn cli_refusals() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    for (args, named) in [
        (vec!["--path", "../air.json"], "../air.json"),
        (
            vec![
                "--path",
                "src/payments/service.py",
                "--start-line",
                "9",
                "--end-line",
                "3",
            ],
            "L9-L3",
        ),
    ] {
        let o = rail_cli(&w, "add-evidence", &run, &args);
        ensure!(
            o.status.code() == Some(1),
            "{args:?}: exit {:?}, expected 1",
            o.status.code()
        );
        ensure!(
            stderr(&o).contains(named),
            "{args:?}: stderr does not name `{named}`: {}",
            stderr(&o)
        );
        ensure!(stdout(&o).trim().is_empty(), "a refusal printed an id");
    }
    ensure!(
        !out(&run, "evidence.json").exists(),
        "refusals created evidence.json"
    );
    Ok(())
}

/// `*` in a scope glob stops at a `/`: a scope of `src/payments/*` admits the files of that
/// directory and refuses those of a directory below it (R-EV-3, as `classify` documents).
pub(super) fn a_single_star_scope_stops_at_a_slash() -> Result<(), Failed> {
    let w = World::new();
    std::fs::create_dir_all(w.repo().join("src/payments/legacy")).unwrap();
    std::fs::write(
        w.repo().join("src/payments/legacy/old.py"),
        "CAPTURE_TIMEOUT = 30  # seconds\n",
    )
    .unwrap();
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.scopes = vec!["src/payments/*=implementation".into()];
    let run = anvil_bench::case::open(&req).map_err(failed)?.run_dir;
    ev(&run, "src/payments/service.py", 32, 39)?;
    let before = tree(&run.join("output"));
    refused_as(
        add_ev(&run, "src/payments/legacy/old.py", None),
        "out_of_scope",
    )?;
    ensure!(tree(&run.join("output")) == before, "output/ changed");
    Ok(())
}
