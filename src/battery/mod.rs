//! The effectiveness battery (DESIGN §10): the scenario corpus and its labels, the arms and
//! controls, trial execution, scoring, statistics, results, resume, partition and merge.
//!
//! Invariant: a corpus is judged only through [`check::check`]; a label reaches scoring only
//! through the [`vault::Vault`] after its trial's case has ended; every figure in results.json
//! is recomputable from its trial records and manifest ([`summary::summarize`]).

pub mod arm;
pub mod cheater;
pub mod check;
mod config;
pub mod contamination;
pub mod corpus;
pub mod endpoint;
mod first_commit;
pub mod merge;
pub mod oracle;
pub mod plan;
mod pool;
pub mod reach;
pub mod results;
pub mod runner;
pub mod score;
pub mod stats;
pub mod summary;
pub mod trial;
pub mod trial_record;
pub mod vault;
pub mod workspace;

pub use arm::Arm;
pub use check::{Options, Report, check};
pub use corpus::{
    Class, Label, LabelDoc, Language, Problem, Scenario, ScenarioDoc, load_labels, load_scenarios,
    seal,
};
