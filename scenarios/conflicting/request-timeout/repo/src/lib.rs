pub mod probe;
pub mod scheduler;
pub mod worker;
