//! Skill contracts: versioned data that says how one class of deficiency may be closed.
//!
//! Invariant: behaviour differs between skills only through contract data. A new skill is a
//! new contract in `builtin.json`, never a special case in code.
//!
//! From the ground up: `kinds` (the deficiency codes and target kinds a contract names),
//! `attestation` (what text states a value), `policy` (what a contract admits), `registry`
//! (the contracts themselves).

pub mod attestation;
mod kinds;
mod policy;
mod registry;
pub mod vocab;

pub use attestation::{AttestRule, Attestation};
pub use kinds::{DeficiencyCode, Severity, TargetKind};
pub use policy::{
    AttestationDefect, Condition, EvidenceKind, OutputSpec, SkillPolicy, ValueConstraint,
    Verification,
};
pub use registry::{Registry, Scope, SkillContract, registry};
