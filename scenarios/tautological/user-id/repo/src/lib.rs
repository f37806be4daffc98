//! Backend-for-frontend of the admin console.

pub mod audit;
pub mod claims;
pub mod handlers;
