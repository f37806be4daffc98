//! AIR — the API model a case refines: the document, target keys, the canonical hash, and
//! deterministic deficiency detection.

mod detect;
mod model;
mod target;

pub use detect::{
    Deficiency, DeficiencyCode, Severity, deficiencies_for, detect, is_tautological, name_words,
};
pub use model::{
    AIR_VERSION, Air, AirError, Capability, ErrorDef, Field, Operation, Provenance, Service,
};
pub use target::{Location, TargetKey, TargetKeyError, TargetKind, is_field_name, is_segment_id};
