//! Cases: identity and immutable runs, the canonical `case.json`, its generated views,
//! proposal parsing and binding, and the lifecycle record.
//!
//! Invariant: `case` never spawns an agent. It reads the repository only through the
//! engine's own code, and never writes an existing run from `open`.

pub mod attest;
pub mod citable;
pub mod claim;
pub mod commit;
// The build script compiles it for the DFA tables and tests rebuild DFAs with it; the
// engine itself takes only the glob syntax from it.
#[cfg_attr(not(test), allow(dead_code))]
mod dfa_build;
mod dfa_table;
pub mod doc;
pub mod error;
pub mod evidence;
pub mod finalize;
pub mod frozen;
pub mod handle;
pub mod journal;
pub mod key;
pub mod layout;
pub mod lifecycle;
pub mod open;
pub mod proposal;
pub mod rail;
pub mod research;
pub mod run;
pub mod schema;
pub mod snapshots;
pub mod store;
#[cfg(test)]
mod testing;
pub mod tool_limits;
pub mod validate;
pub mod verify;
pub mod views;

pub use doc::CaseDoc;
pub use error::CaseError;
pub use handle::RunHandle;
pub use key::{CaseKey, RunId};
pub use open::{OpenMode, OpenRequest, Opened, open};
pub use run::Run;
pub use tool_limits::ToolLimits;
