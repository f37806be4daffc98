//! `scenarios check`, `scenarios list` and `scenarios seal`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde::Serialize;
use tabled::{Table, Tabled, builder::Builder, settings::Style};

use crate::battery::{self, Class, Options, Problem};
use crate::cli::exit;
use crate::skill::registry;

#[derive(Debug, Subcommand)]
pub enum ScenariosCommand {
    /// Validate a corpus: formats, ids, deficiencies (as `case open` detects them), labels,
    /// evidence regions, canaries, repository size and coverage. Exits 1 listing every
    /// problem, each naming its file.
    Check(CheckArgs),
    /// A table of scenarios (id, class, skill, expected status, language) and class × skill
    /// counts.
    List(ListArgs),
    /// Print the labels commitment: sha256 over the canonical label set.
    Seal(SealArgs),
}

#[derive(Debug, Args)]
pub struct DirArgs {
    /// The scenarios directory.
    #[arg(long, value_name = "DIR", default_value = "scenarios")]
    pub scenarios: PathBuf,
    /// The labels directory.
    #[arg(long, value_name = "DIR", default_value = "labels-private")]
    pub labels: PathBuf,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// Skip the corpus-wide coverage rules (to check a partial corpus).
    #[arg(long)]
    pub no_coverage: bool,
    /// Skip running the oracle (the positive control, told each label) through the rails
    /// on every scenario.
    #[arg(long)]
    pub no_oracle: bool,
    /// Print a versioned JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// Print a versioned JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SealArgs {
    /// The labels directory.
    #[arg(long, value_name = "DIR", default_value = "labels-private")]
    pub labels: PathBuf,
    /// Print a versioned JSON document instead of the bare hash.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: ScenariosCommand) -> u8 {
    match cmd {
        ScenariosCommand::Check(args) => check(&args),
        ScenariosCommand::List(args) => list(&args),
        ScenariosCommand::Seal(args) => seal(&args),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CheckDoc<'a> {
    format: &'static str,
    format_version: u32,
    ok: bool,
    scenarios: usize,
    labels: usize,
    problems: &'a [Problem],
}

fn check(args: &CheckArgs) -> u8 {
    let opts = Options {
        coverage: !args.no_coverage,
        oracle: !args.no_oracle,
    };
    let report = battery::check(&args.dirs.scenarios, &args.dirs.labels, opts);
    if args.json {
        super::print_json(&CheckDoc {
            format: "anvil-scenario-check",
            format_version: 1,
            ok: report.ok(),
            scenarios: report.scenarios,
            labels: report.labels,
            problems: &report.problems,
        });
    } else {
        for p in &report.problems {
            println!("{p}");
        }
    }
    if report.ok() {
        if !args.json {
            println!(
                "ok: {} scenarios, {} labels{}",
                report.scenarios,
                report.labels,
                if opts.coverage {
                    ""
                } else {
                    " (coverage not checked)"
                }
            );
        }
        exit::OK
    } else {
        let n = report.problems.len();
        eprintln!(
            "error: {n} problem{} in {} scenarios and {} labels",
            if n == 1 { "" } else { "s" },
            report.scenarios,
            report.labels
        );
        exit::REJECTED
    }
}

#[derive(Tabled, Serialize)]
#[serde(rename_all = "camelCase")]
struct ListRow {
    id: String,
    class: String,
    skill: String,
    #[tabled(rename = "expected status")]
    status: String,
    language: String,
    #[tabled(skip)]
    target: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListDoc {
    format: &'static str,
    format_version: u32,
    scenarios: Vec<ListRow>,
    /// class → skill → number of scenarios.
    counts: BTreeMap<&'static str, BTreeMap<String, usize>>,
}

fn list(args: &ListArgs) -> u8 {
    let (scenarios, mut problems) = battery::load_scenarios(&args.dirs.scenarios);
    let (labels, label_problems) = battery::load_labels(&args.dirs.labels);
    problems.extend(label_problems);
    let status: BTreeMap<&str, String> = labels
        .iter()
        .map(|l| (l.doc.scenario.as_str(), l.doc.expect.status.to_string()))
        .collect();
    let rows: Vec<ListRow> = scenarios
        .iter()
        .map(|s| ListRow {
            id: s.doc.id.clone(),
            class: s.doc.class.to_string(),
            skill: s.doc.skill.clone(),
            status: status
                .get(s.dir_id.as_str())
                .cloned()
                .unwrap_or_else(|| "-".into()),
            language: s.doc.language.to_string(),
            target: s.doc.target.clone(),
        })
        .collect();
    let mut counts: BTreeMap<&'static str, BTreeMap<String, usize>> = BTreeMap::new();
    for s in &scenarios {
        *counts
            .entry(s.doc.class.as_str())
            .or_default()
            .entry(s.doc.skill.clone())
            .or_default() += 1;
    }
    if !problems.is_empty() {
        eprintln!(
            "warning: {} files could not be read; run `anvil-bench scenarios check`",
            problems.len()
        );
    }
    if args.json {
        super::print_json(&ListDoc {
            format: "anvil-scenario-list",
            format_version: 1,
            scenarios: rows,
            counts,
        });
        return exit::OK;
    }
    if rows.is_empty() {
        println!("no scenarios in {}", args.dirs.scenarios.display());
        return exit::OK;
    }
    let n = rows.len();
    println!("{}", Table::new(rows).with(Style::sharp()));
    println!("{n} scenarios\n");
    println!("{}", counts_table(&counts));
    exit::OK
}

/// Class × skill counts, every class and every built-in skill shown (zeros as `·`).
fn counts_table(counts: &BTreeMap<&'static str, BTreeMap<String, usize>>) -> Table {
    let skills = registry().names();
    let mut builder = Builder::default();
    let mut header = vec!["class".to_string()];
    header.extend(skills.iter().map(std::string::ToString::to_string));
    header.push("total".into());
    builder.push_record(header);
    let cell = |n: usize| if n == 0 { "·".into() } else { n.to_string() };
    let mut column_totals = vec![0usize; skills.len() + 1];
    for class in Class::ALL {
        let row = counts.get(class.as_str());
        let mut record = vec![class.to_string()];
        let mut total = 0;
        for (i, skill) in skills.iter().enumerate() {
            let n = row.and_then(|r| r.get(*skill)).copied().unwrap_or(0);
            total += n;
            column_totals[i] += n;
            record.push(cell(n));
        }
        column_totals[skills.len()] += total;
        record.push(total.to_string());
        builder.push_record(record);
    }
    let mut last = vec!["total".to_string()];
    last.extend(column_totals.iter().map(std::string::ToString::to_string));
    builder.push_record(last);
    let mut table = builder.build();
    table.with(Style::sharp());
    table
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SealDoc<'a> {
    format: &'static str,
    format_version: u32,
    labels_dir: &'a Path,
    labels: usize,
    seal: String,
}

fn seal(args: &SealArgs) -> u8 {
    let (labels, problems) = battery::load_labels(&args.labels);
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("error: {p}");
        }
        eprintln!("error: refusing to seal a label set with unreadable labels");
        return exit::REJECTED;
    }
    let seal = battery::seal(&labels);
    if args.json {
        super::print_json(&SealDoc {
            format: "anvil-label-seal",
            format_version: 1,
            labels_dir: &args.labels,
            labels: labels.len(),
            seal,
        });
    } else {
        println!("{seal}");
    }
    exit::OK
}
