//! `demo`: the scripted cases end to end on the bundled example.

use std::path::PathBuf;

use clap::Args;
use tabled::{Table, Tabled, settings::Style};

use crate::cli::exit;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write the example and its runs (default: a new temp directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Tabled)]
struct DemoLine {
    target: String,
    skill: String,
    status: String,
    tier: String,
    applied: String,
}

pub fn demo(args: DemoArgs) -> u8 {
    let dir = args.dir.unwrap_or_else(crate::demo::default_dir);
    let json = args.json;
    let result = crate::demo::run(&dir, |row| {
        if !json {
            eprintln!(
                "closed {} ({}): {} · {}",
                row.target, row.skill, row.status, row.tier
            );
        }
    });
    match result {
        Ok(report) if json => {
            super::print_json(&report);
            exit::OK
        }
        Ok(report) => {
            let rows = report.cases.iter().map(|r| DemoLine {
                target: r.target.clone(),
                skill: r.skill.clone(),
                status: r.status.clone(),
                tier: r.tier.clone(),
                applied: if r.applied_to.is_some() {
                    "yes".into()
                } else {
                    format!("no: {}", r.reasons.join("; "))
                },
            });
            println!("{}", Table::new(rows).with(Style::sharp()));
            println!("example and runs in {}", report.dir);
            println!("final AIR: {}", report.final_air);
            exit::OK
        }
        Err(e) => super::fail(&e, json),
    }
}
