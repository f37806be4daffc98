//! Reports of battery results (DESIGN §10): report.md for a pull-request comment, one
//! self-contained report.html with charts and per-trial drill-downs, a JSON summary,
//! JUnit for CI dashboards, and `report diff` of two runs.
//!
//! Invariant: a report is a pure function of results.json and, for drill-downs only, the
//! case runs kept in `runs/` beside it (a missing run is said plainly): no clock, no
//! environment, no unordered map, so the same inputs render the same bytes and a committed
//! example regenerates byte for byte.

pub mod charts;
pub mod diff;
pub mod drill;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod model;
pub mod terminal;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::battery::results::{self, DocError, ResultsDoc};

pub const REPORT_MD: &str = "report.md";
pub const REPORT_HTML: &str = "report.html";

/// The views of one battery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
    Json,
    Junit,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Read(#[from] DocError),
    #[error("error writing `{path}`: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("error rendering `{what}`: {source:#}")]
    Render {
        what: &'static str,
        #[source]
        source: minijinja::Error,
    },
    #[error("error drawing the {chart} chart: {message}")]
    Chart {
        chart: &'static str,
        message: String,
    },
    /// Two runs that cannot be compared, naming the fields that differ.
    #[error("{0}")]
    Incompatible(String),
    #[error(transparent)]
    Output(#[from] crate::outpath::OutPathError),
    /// An output that would replace a record of a results directory being read.
    #[error(
        "refusing to write `{}`: it is a record of the results directory `{}` (its results.json, manifest.json, trials/ or runs/); name a path outside them",
        out.display(),
        dir.display()
    )]
    OverRecords { out: PathBuf, dir: PathBuf },
}

/// Refuses an `out` that would replace a record of a results directory among `inputs`
/// (each a results directory or its results.json): its results.json or manifest.json, or
/// anything under trials/ or runs/. A report beside them (report.md, report.html) is
/// allowed, as the battery writes it there itself. Paths are compared resolved (symlinks
/// and `..`), `out` through its nearest existing ancestor.
///
/// # Errors
///
/// [`ReportError::OverRecords`] naming `out` and the results directory.
pub fn check_out_beside_records(out: &Path, inputs: &[&Path]) -> Result<(), ReportError> {
    let o = crate::battery::runner::canonical_lenient(out);
    for input in inputs {
        let dir = if input.is_dir() {
            input.to_path_buf()
        } else {
            input.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let Ok(dir) = std::fs::canonicalize(&dir) else {
            continue;
        };
        let record = [results::RESULTS_JSON, results::MANIFEST_JSON]
            .iter()
            .any(|f| o == dir.join(f))
            || [results::TRIALS_DIR, results::RUNS_DIR]
                .iter()
                .any(|d| o.starts_with(dir.join(d)));
        if record {
            return Err(ReportError::OverRecords {
                out: out.to_path_buf(),
                dir,
            });
        }
    }
    Ok(())
}

/// A results document and where it was read from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub doc: ResultsDoc,
    /// The path as given (a results directory or a results.json).
    pub given: PathBuf,
    /// The directory holding results.json (and `runs/`, when kept).
    pub dir: PathBuf,
}

/// Reads results.json from a results directory or the file itself.
///
/// # Errors
///
/// A path that is neither a results directory nor a results.json, or a document that is
/// unreadable, over the cap, of another format or version, or malformed (its field named).
pub fn load(path: &Path) -> Result<Loaded, ReportError> {
    let doc = results::read_results(path)?;
    if let Some(field) = unrecomputed(&doc) {
        return Err(ReportError::Incompatible(format!(
            "`{}`: its `{field}` is not what its trials give (R-BAT-14: every figure recomputes from the trials and the manifest's seed); the file was edited — `anvil-bench battery merge` of its directory recomputes it",
            path.display()
        )));
    }
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    Ok(Loaded {
        doc,
        given: path.to_path_buf(),
        dir,
    })
}

/// The first derived member of `doc` (the summaries, the controls, the deterministic
/// arms' disagreements, the trials' order) that differs from what its trials, manifest
/// and seed give; `None` when every one recomputes.
fn unrecomputed(doc: &ResultsDoc) -> Option<&'static str> {
    let again = crate::battery::runner::assemble(
        doc.manifest.clone(),
        doc.trials.clone(),
        doc.not_run.clone(),
        doc.label_seal_after.clone(),
        doc.complete,
    );
    [
        ("classes", again.classes == doc.classes),
        ("overall", again.overall == doc.overall),
        ("controls", again.controls == doc.controls),
        (
            "nondeterministic",
            again.nondeterministic == doc.nondeterministic,
        ),
        ("trials", again.trials == doc.trials),
    ]
    .into_iter()
    .find(|(_, same)| !same)
    .map(|(field, _)| field)
}

/// The JSON view: the figures report.md shows, as data.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonReport<'a> {
    format: &'static str,
    format_version: u32,
    manifest: &'a results::Manifest,
    classes: Vec<model::ClassRow>,
    largest_effects: Vec<model::Effect>,
    controls: Vec<model::ControlLine>,
    infra: Vec<&'a str>,
    contaminated: Vec<&'a str>,
    not_run: &'a [results::NotRun],
    nondeterministic: &'a [String],
    complete: bool,
}

fn json(doc: &ResultsDoc) -> String {
    let view = JsonReport {
        format: "anvil-battery-report",
        format_version: 1,
        manifest: &doc.manifest,
        classes: model::class_rows(doc),
        largest_effects: model::largest_effects(doc, 3),
        controls: model::controls(doc),
        infra: model::infra(doc).iter().map(|t| t.id.as_str()).collect(),
        contaminated: model::contaminated(doc)
            .iter()
            .map(|t| t.id.as_str())
            .collect(),
        not_run: &doc.not_run,
        nondeterministic: &doc.nondeterministic,
        complete: doc.complete,
    };
    let mut s = serde_json::to_string_pretty(&view).unwrap_or_default();
    s.push('\n');
    s
}

/// One view of a battery; `dir` is where its kept `runs/` would be (drill-downs only).
///
/// # Errors
///
/// Any error of the chosen view's renderer.
pub fn render(doc: &ResultsDoc, dir: &Path, format: Format) -> Result<String, ReportError> {
    match format {
        Format::Markdown => Ok(printable(&markdown::render(doc))),
        Format::Html => html::render(doc, dir),
        Format::Json => Ok(json(doc)),
        Format::Junit => junit::render(doc).map(|xml| printable(&xml)),
    }
}

/// `text` with every control character but newline and tab, and the two noncharacters
/// U+FFFE and U+FFFF, replaced by U+FFFD. Results carry what agents wrote (an
/// infrastructure failure's last stderr lines, a reason): in markdown or on a terminal an
/// escape sequence would act, and XML 1.0 refuses these characters outright, so a JUnit
/// file holding one is not well-formed.
#[must_use]
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            let kept =
                c == '\n' || c == '\t' || !(c.is_control() || c == '\u{fffe}' || c == '\u{ffff}');
            if kept { c } else { '\u{fffd}' }
        })
        .collect()
}

/// One view of `report diff`.
///
/// # Errors
///
/// Any error of the chosen view's renderer.
pub fn render_diff(d: &diff::Diff, format: Format) -> Result<String, ReportError> {
    match format {
        Format::Markdown => Ok(printable(&markdown::render_diff(d))),
        Format::Html => html::render_diff(d),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(d).unwrap_or_default();
            s.push('\n');
            Ok(s)
        }
        Format::Junit => Err(ReportError::Incompatible(
            "a diff has no JUnit view: use --format md, html or json".into(),
        )),
    }
}

/// Writes `text` to `path` whole (atomic rename): a new path or a regular file, never over
/// a symlink, device, FIFO or directory (see [`crate::outpath`]).
///
/// # Errors
///
/// A destination that may not receive a file (see [`crate::outpath`]), or an I/O error
/// writing it.
pub fn write(path: &Path, text: &str) -> Result<(), ReportError> {
    crate::outpath::check_file(path)?;
    crate::fsio::write_atomic(path, text.as_bytes()).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes report.md and report.html beside results.json in `dir`; returns their paths.
///
/// # Errors
///
/// A view that fails to render, or any error of [`write()`].
pub fn write_beside(dir: &Path, doc: &ResultsDoc) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Vec::new();
    for (name, format) in [(REPORT_MD, Format::Markdown), (REPORT_HTML, Format::Html)] {
        let path = dir.join(name);
        write(&path, &render(doc, dir, format)?)?;
        written.push(path);
    }
    Ok(written)
}
