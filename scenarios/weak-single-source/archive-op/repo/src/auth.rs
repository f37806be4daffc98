use axum::http::HeaderMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Viewer,
    Editor,
    Owner,
}

/// The gateway has already authenticated the caller and forwards the role it resolved.
pub fn role(headers: &HeaderMap) -> Option<Role> {
    match headers.get("x-project-role")?.to_str().ok()? {
        "viewer" => Some(Role::Viewer),
        "editor" => Some(Role::Editor),
        "owner" => Some(Role::Owner),
        _ => None,
    }
}

pub fn require(headers: &HeaderMap, at_least: Role) -> Result<Role, ()> {
    match role(headers) {
        Some(r) if r >= at_least => Ok(r),
        _ => Err(()),
    }
}
