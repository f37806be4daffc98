pub mod delivery;
pub mod redact;
pub mod retention;
