use axum::http::{HeaderMap, HeaderValue};

#[path = "../src/auth.rs"]
mod auth;

fn headers(role: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("x-project-role", HeaderValue::from_str(role).unwrap());
    h
}

#[test]
fn only_owners_may_archive_or_delete() {
    assert!(auth::require(&headers("owner"), auth::Role::Owner).is_ok());
    assert!(auth::require(&headers("editor"), auth::Role::Owner).is_err());
    assert!(auth::require(&headers("viewer"), auth::Role::Owner).is_err());
}

#[test]
fn unknown_role_is_refused() {
    assert!(auth::require(&headers("admin"), auth::Role::Viewer).is_err());
    assert!(auth::require(&HeaderMap::new(), auth::Role::Viewer).is_err());
}
