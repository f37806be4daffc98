//! `skills`: the built-in skill contracts and their policy hashes.

use clap::Args;
use tabled::{Table, Tabled, settings::Style};

use crate::cli::exit;
use crate::skill::registry;

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

pub fn skills(args: &SkillsArgs) -> u8 {
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
