use axum::{http::StatusCode, Json};
use serde::Serialize;

use crate::claims::{ClaimsError, IdTokenClaims};

#[derive(Debug, Serialize)]
pub struct SessionView {
    pub user_id: String,
    pub display_name: String,
    pub tenant_id: String,
    pub roles: Vec<String>,
    pub expires_at: i64,
}

#[derive(Debug, Serialize)]
pub struct ErrorBody {
    pub code: &'static str,
}

const ROLE_PREFIX: &str = "console-";

/// `GET /session`: who the console thinks is signed in, straight from the verified ID token.
pub fn session_view(claims: Result<IdTokenClaims, ClaimsError>) -> Result<Json<SessionView>, (StatusCode, Json<ErrorBody>)> {
    let claims = claims.map_err(|e| match e {
        ClaimsError::Missing => (StatusCode::UNAUTHORIZED, Json(ErrorBody { code: "NOT_SIGNED_IN" })),
        ClaimsError::Invalid => (StatusCode::UNAUTHORIZED, Json(ErrorBody { code: "SESSION_EXPIRED" })),
    })?;
    let roles: Vec<String> = claims
        .groups
        .iter()
        .filter_map(|g| g.strip_prefix(ROLE_PREFIX).map(str::to_string))
        .collect();
    if roles.is_empty() {
        return Err((StatusCode::FORBIDDEN, Json(ErrorBody { code: "NO_CONSOLE_ACCESS" })));
    }
    Ok(Json(SessionView {
        user_id: claims.sub.clone(),
        display_name: claims.name.clone().unwrap_or_else(|| claims.sub.clone()),
        tenant_id: claims.org.clone(),
        roles,
        expires_at: claims.exp,
    }))
}
