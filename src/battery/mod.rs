//! The effectiveness battery's corpus: scenarios, their evaluator-owned labels, the checks
//! that keep them sound, and the labels commitment (DESIGN §10).
//!
//! Invariant: a corpus is judged only through [`check::check`], which names the file at
//! fault for every failure, and a scenario's deficiency is decided by the same resolution
//! `case open` uses; the label set is committed to by [`corpus::seal`] alone.

pub mod check;
pub mod corpus;

pub use check::{Options, Report, check};
pub use corpus::{
    Class, Label, LabelDoc, Language, Problem, Scenario, ScenarioDoc, load_labels, load_scenarios,
    seal,
};
