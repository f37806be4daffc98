//! Skill contracts: versioned data that says how one class of deficiency may be closed.
//!
//! Invariant: behaviour differs between skills only through contract data. A new skill is a
//! new contract in `builtin.json`, never a special case in code.

pub mod attestation;
mod registry;
pub mod vocab;

pub use attestation::{AttestRule, Attestation};
pub use registry::{
    Condition, EvidenceKind, OutputSpec, Registry, Scope, SkillContract, SkillPolicy,
    ValueConstraint, Verification, registry,
};
