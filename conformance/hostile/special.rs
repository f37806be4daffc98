//! Input files that are not regular files (X-FIFO-1..5): a FIFO, a device or a symlink given
//! where the engine reads a document is refused by name at once — never opened for a
//! blocking read, never read to an end that does not come, never followed.

use std::process::Stdio;

use libtest_mimic::Failed;

use super::probe::{cli, list_files_request, mkfifo, refused, run, snapshot};
use crate::support::{UNIT_TARGET, World};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "hostile::an_air_that_is_a_fifo_is_refused_at_open_without_blocking",
            rules: &["X-FIFO-1", "X-OPEN-1"],
            run: air_fifo,
        },
        Check {
            name: "hostile::an_excerpt_file_that_is_a_device_or_a_fifo_is_refused_without_reading_it",
            rules: &["X-FIFO-2"],
            run: excerpt_device,
        },
        Check {
            name: "hostile::a_tool_request_that_is_a_fifo_is_refused_without_blocking",
            rules: &["X-FIFO-3"],
            run: request_fifo,
        },
        Check {
            name: "hostile::a_script_that_is_a_fifo_is_refused_by_replay_model_and_investigate",
            rules: &["X-FIFO-4"],
            run: script_fifo,
        },
        Check {
            name: "hostile::an_input_that_is_a_symlink_is_refused_not_followed",
            rules: &["X-FIFO-5", "X-OPEN-1"],
            run: symlink_inputs,
        },
    ]
}

fn open_with_air(w: &World, air: &str) -> Vec<String> {
    [
        "case",
        "open",
        "--air",
        air,
        "--repo",
        w.repo().to_str().unwrap(),
        "--skill",
        "annotate-unit",
        "--target",
        UNIT_TARGET,
        "--cases-dir",
        w.cases().to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn air_fifo() -> Result<(), Failed> {
    let w = World::new();
    let fifo = mkfifo(&w.root().join("air.json.fifo"));
    let before = snapshot(w.root());
    let out = cli(w.root(), &strs(&open_with_air(&w, fifo.to_str().unwrap())))?;
    refused(&out, &[fifo.to_str().unwrap(), "not a regular file"])?;
    ensure!(
        snapshot(w.root()) == before,
        "a refused open changed the world"
    );
    Ok(())
}

fn external_args<'a>(run_dir: &'a str, file: &'a str) -> [&'a str; 10] {
    [
        "case",
        "add-external-evidence",
        run_dir,
        "--source",
        "vendor-docs",
        "--uri",
        "https://vendor.example/x",
        "--excerpt-file",
        file,
        "--json",
    ]
}

fn excerpt_device() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = w.open_unit()?.run_dir;
    let fifo = mkfifo(&w.root().join("excerpt.fifo"));
    let before = snapshot(w.root());
    for file in ["/dev/zero", "/dev/urandom", fifo.to_str().unwrap()] {
        let out = cli(w.root(), &external_args(run_dir.to_str().unwrap(), file))?;
        refused(&out, &[file, "not a regular file"])?;
    }
    ensure!(
        snapshot(w.root()) == before,
        "a refused excerpt changed the world"
    );
    Ok(())
}

fn request_fifo() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = w.open_unit()?.run_dir;
    let fifo = mkfifo(&w.root().join("req.fifo"));
    let before = snapshot(w.root());
    for file in [fifo.to_str().unwrap(), "/dev/zero"] {
        let args = [
            "case",
            "query",
            run_dir.to_str().unwrap(),
            "--request",
            file,
        ];
        let out = cli(w.root(), &args)?;
        refused(&out, &[file, "not a regular file"])?;
    }
    ensure!(
        snapshot(w.root()) == before,
        "a refused request changed the world"
    );
    Ok(())
}

fn script_fifo() -> Result<(), Failed> {
    let w = World::new();
    let run_dir = w.open_unit()?.run_dir;
    let fifo = mkfifo(&w.root().join("script.fifo"));
    let before = snapshot(w.root());
    let fifo = fifo.to_str().unwrap();
    let out = run(
        w.root(),
        &["replay-model", "--script", fifo, "--exit-on-stdin-eof"],
        &[],
        Stdio::null(),
    )?;
    refused(&out, &[fifo, "not a regular file"])?;
    let args = [
        "case",
        "investigate",
        run_dir.to_str().unwrap(),
        "--driver",
        "scripted",
        "--script",
        fifo,
        "--backend",
        "native",
        "--allow-degraded-native",
    ];
    let out = cli(w.root(), &args)?;
    refused(&out, &[fifo, "not a regular file"])?;
    ensure!(
        snapshot(w.root()) == before,
        "a refused script changed the world"
    );
    Ok(())
}

fn symlink_inputs() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let run_dir = opened.run_dir;
    // Links to files that are valid inputs: only the link makes them unacceptable.
    let air_link = w.root().join("air-link.json");
    std::os::unix::fs::symlink(w.air(), &air_link).unwrap();
    let text = w.root().join("excerpt.txt");
    std::fs::write(&text, "capture_timeout is in seconds\n").unwrap();
    let text_link = w.root().join("excerpt-link.txt");
    std::os::unix::fs::symlink(&text, &text_link).unwrap();
    let request = list_files_request(&opened.run_id.to_string());
    let req = w.root().join("req.json");
    std::fs::write(&req, request.to_string()).unwrap();
    let req_link = w.root().join("req-link.json");
    std::os::unix::fs::symlink(&req, &req_link).unwrap();
    let before = snapshot(w.root());

    let out = cli(
        w.root(),
        &strs(&open_with_air(&w, air_link.to_str().unwrap())),
    )?;
    refused(&out, &[air_link.to_str().unwrap(), "symlink"])?;
    let link = text_link.to_str().unwrap();
    let out = cli(w.root(), &external_args(run_dir.to_str().unwrap(), link))?;
    refused(&out, &[link, "symlink"])?;
    let link = req_link.to_str().unwrap();
    let out = cli(
        w.root(),
        &[
            "case",
            "query",
            run_dir.to_str().unwrap(),
            "--request",
            link,
        ],
    )?;
    refused(&out, &[link, "symlink"])?;
    ensure!(
        snapshot(w.root()) == before,
        "a refused input changed the world"
    );
    Ok(())
}
