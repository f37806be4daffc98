//! `report show` and `report diff`: views of battery results.
//!
//! Parse, call [`crate::report`], print or write; a report that cannot be read, rendered
//! or compared is exit 1, a bad flag exit 2 (clap).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use crate::cli::exit;
use crate::report::{self, Format, ReportError};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ShowFormat {
    Md,
    Html,
    Json,
    Junit,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DiffFormat {
    Md,
    Html,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Render one battery's results: markdown (a PR comment), one self-contained HTML page
    /// with charts and per-trial drill-downs, JSON, or JUnit (one testcase per trial).
    Show(ShowArgs),
    /// Compare two batteries on the scenarios both ran: per-class change with a paired
    /// interval, the scenarios that flipped, cost and tokens.
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
#[command(after_long_help = "\
The drill-downs of the HTML read the case runs the battery kept in DIR/runs/; without them \
they show what results.json holds and say the run is not kept.")]
pub struct ShowArgs {
    /// A results directory, or its results.json.
    #[arg(value_name = "DIR")]
    pub results: PathBuf,
    #[arg(long, value_enum, default_value = "md")]
    pub format: ShowFormat,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_long_help = "\
Two runs are compared only when they share the corpus digest and the label seal (else \
refused, exit 1, naming the fields; --force compares anyway and says so). The change is B − A \
investigator accuracy with a paired bootstrap 95% interval seeded by A's seed; a class is \
`better` or `worse` only when its interval excludes 0.")]
pub struct DiffArgs {
    /// The first run (a results directory or its results.json).
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The second run.
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// Compare despite a different corpus digest or label seal.
    #[arg(long)]
    pub force: bool,
    #[arg(long, value_enum, default_value = "md")]
    pub format: DiffFormat,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Prints `text`, or writes it to `out`, which may not replace a record of a results
/// directory read (`inputs`), nor any of them however it is spelled (a hard link).
fn emit(text: &str, out: &Option<PathBuf>, inputs: &[&Path]) -> Result<(), ReportError> {
    if let Some(path) = out {
        report::check_out_beside_records(path, inputs)?;
        let inputs: Vec<PathBuf> = inputs.iter().map(|p| results_file(p)).collect();
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        crate::outpath::check_not_input(path, &inputs)?;
        report::write(path, text)
    } else {
        print!("{text}");
        Ok(())
    }
}

/// The results.json a DIR argument stands for.
fn results_file(p: &Path) -> PathBuf {
    if p.is_dir() {
        p.join("results.json")
    } else {
        p.to_path_buf()
    }
}

fn show(a: &ShowArgs) -> Result<(), ReportError> {
    let format = match a.format {
        ShowFormat::Md => Format::Markdown,
        ShowFormat::Html => Format::Html,
        ShowFormat::Json => Format::Json,
        ShowFormat::Junit => Format::Junit,
    };
    let loaded = report::load(&a.results)?;
    emit(
        &report::render(&loaded.doc, &loaded.dir, format)?,
        &a.out,
        &[&a.results],
    )
}

fn diff(a: &DiffArgs) -> Result<(), ReportError> {
    let format = match a.format {
        DiffFormat::Md => Format::Markdown,
        DiffFormat::Html => Format::Html,
        DiffFormat::Json => Format::Json,
    };
    let d = report::diff::diff_paths(&a.a, &a.b, a.force)?;
    for f in &d.forced {
        eprintln!(
            "warning: `{}` differs ({} in A, {} in B): compared anyway (--force)",
            f.field, f.a, f.b
        );
    }
    emit(&report::render_diff(&d, format)?, &a.out, &[&a.a, &a.b])
}

pub fn run(cmd: &ReportCommand) -> u8 {
    let result = match &cmd {
        ReportCommand::Show(a) => show(a),
        ReportCommand::Diff(a) => diff(a),
    };
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("error: {e}");
            exit::REJECTED
        }
    }
}
