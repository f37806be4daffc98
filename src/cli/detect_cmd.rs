//! `detect` and `skills`.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;
use tabled::{Table, Tabled, settings::Style};

use crate::air::{Air, Deficiency, detect as detect_plan};
use crate::case::CaseError;
use crate::cli::exit;
use crate::skill::registry;

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

pub fn detect(args: DetectArgs) -> u8 {
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
            skill: d.skill.clone(),
            severity: d.severity.to_string(),
            detail: d.detail.clone(),
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

#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// Print the full contracts as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Tabled)]
struct SkillRow {
    skill: String,
    target: String,
    triggers: String,
    writes: String,
    #[tabled(rename = "min strength")]
    strength: f64,
    #[tabled(rename = "policy hash")]
    policy: String,
}

pub fn skills(args: SkillsArgs) -> u8 {
    let reg = registry();
    if args.json {
        super::print_json(&serde_json::json!({
            "format": "anvil-skills", "formatVersion": 1, "skills": reg.skills,
            "defaultScopes": reg.default_scopes,
        }));
        return exit::OK;
    }
    let rows = reg.skills.iter().map(|s| SkillRow {
        skill: format!("{}@{}", s.name, s.version),
        target: s.target_kind.to_string(),
        triggers: s
            .policy
            .triggers
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        writes: s.policy.writable_fields().join(", "),
        strength: s.policy.minimum_strength,
        policy: crate::canon::canonical_hash(&s.policy)[..19].to_string(),
    });
    println!("{}", Table::new(rows).with(Style::sharp()));
    exit::OK
}

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
