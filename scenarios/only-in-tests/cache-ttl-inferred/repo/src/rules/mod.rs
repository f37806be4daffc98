use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use edgeplane::{limits, ControlPlane, EdgeError, Rule};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Deserialize)]
pub struct NewCacheRule {
    pub path_pattern: String,
    pub cache_ttl: u64,
    #[serde(default)]
    pub bypass_cookies: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct CacheRuleCreated {
    pub rule_id: String,
    pub created_at: String,
}

type ApiResult<T> = Result<(StatusCode, Json<T>), (StatusCode, Json<serde_json::Value>)>;

fn err(status: StatusCode, code: &str) -> (StatusCode, Json<serde_json::Value>) {
    (status, Json(json!({ "code": code })))
}

pub async fn create_cache_rule(
    State(edge): State<ControlPlane>,
    Path(site_id): Path<String>,
    Json(body): Json<NewCacheRule>,
) -> ApiResult<CacheRuleCreated> {
    let site = edge.site(&site_id).await.ok_or_else(|| err(StatusCode::NOT_FOUND, "SITE_NOT_FOUND"))?;
    if !body.path_pattern.starts_with('/') || body.path_pattern.contains("**/**") {
        return Err(err(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_PATTERN"));
    }
    if body.cache_ttl == 0 || body.cache_ttl > limits::MAX_TTL {
        return Err(err(StatusCode::UNPROCESSABLE_ENTITY, "TTL_OUT_OF_RANGE"));
    }
    let rule = Rule::cache(&body.path_pattern, body.cache_ttl).bypass_on(&body.bypass_cookies);
    match site.put_rule(rule).await {
        Ok(stored) => Ok((
            StatusCode::CREATED,
            Json(CacheRuleCreated { rule_id: stored.id, created_at: stored.created_at }),
        )),
        Err(EdgeError::Unavailable) => Err(err(StatusCode::SERVICE_UNAVAILABLE, "CDN_UNAVAILABLE")),
        Err(_) => Err(err(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_PATTERN")),
    }
}
