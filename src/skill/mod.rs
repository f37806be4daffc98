//! Skill contracts: versioned data that says how one class of deficiency may be closed.
//!
//! Invariant: behaviour differs between skills only through contract data. A new skill is a
//! new contract in `builtin.json`, never a special case in code.

mod registry;
pub mod vocab;

pub use registry::{
    Condition, EvidenceKind, OutputSpec, Registry, Scope, SkillContract, SkillPolicy,
    ValueConstraint, Verification, registry,
};
