//! AIR — the API model a case refines: the document, target keys, the canonical hash,
//! deterministic deficiency detection, and import from (and export back to) OpenAPI.

mod detect;
mod model;
pub mod openapi;
mod target;

pub use detect::{Deficiency, deficiencies_for, detect, is_tautological, name_words};
pub use model::{
    AIR_VERSION, Air, AirError, AirSource, Capability, Composition, ErrorDef, Field, KnownAir,
    Operation, Provenance, Service,
};
pub use target::{Location, TargetKey, TargetKeyError, is_field_name, is_segment_id};
// A contract names deficiency codes and target kinds, so they live below AIR, in `skill`.
pub use crate::skill::{DeficiencyCode, Severity, TargetKind};
