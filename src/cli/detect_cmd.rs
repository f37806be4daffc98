//! `detect`: the deterministic refinement plan of an AIR (or an OpenAPI document).

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;
use tabled::{Table, Tabled, settings::Style};

use crate::air::{Air, Deficiency, detect as detect_plan};
use crate::case::CaseError;
use crate::cli::exit;

#[derive(Debug, Args)]
pub struct DetectArgs {
    /// The AIR document (.json, .yaml or .yml).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "spec",
        conflicts_with = "spec"
    )]
    pub air: Option<PathBuf>,
    /// An OpenAPI 3.0/3.1 or Swagger 2.0 description: import it and print a summary per
    /// operation (deficiencies by skill).
    #[arg(long, value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// Print a versioned JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Plan<'a> {
    format: &'static str,
    format_version: u32,
    air_hash: String,
    deficiencies: &'a [Deficiency],
}

#[derive(Tabled)]
struct Row {
    target: String,
    code: String,
    skill: String,
    severity: String,
    detail: String,
}

pub fn detect(args: &DetectArgs) -> u8 {
    let path = match (&args.air, &args.spec) {
        (_, Some(spec)) => return super::air_cmd::detect_spec(spec, args.json),
        (Some(air), None) => air,
        (None, None) => return exit::USAGE,
    };
    let air = match Air::load(path) {
        Ok(a) => a,
        Err(e) => return super::fail(&CaseError::Air(e), args.json),
    };
    let plan = detect_plan(&air);
    if args.json {
        super::print_json(&Plan {
            format: "anvil-plan",
            format_version: 1,
            air_hash: air.hash(),
            deficiencies: &plan,
        });
    } else if plan.is_empty() {
        println!("no deficiencies in {}", path.display());
    } else {
        let rows = plan.iter().map(|d| Row {
            target: d.target.to_string(),
            code: d.code.to_string(),
            skill: d.skill.to_string(),
            severity: d.severity.to_string(),
            detail: d.detail(),
        });
        println!("{}", Table::new(rows).with(Style::sharp()));
        println!(
            "{} {}",
            plan.len(),
            if plan.len() == 1 {
                "deficiency"
            } else {
                "deficiencies"
            }
        );
    }
    exit::OK
}
