use jsonwebtoken::{decode, Algorithm, DecodingKey, Validation};
use serde::Deserialize;

/// Claims of the ID token the identity provider issues at sign-in.
#[derive(Debug, Clone, Deserialize)]
pub struct IdTokenClaims {
    /// Issuer URL of the identity provider.
    pub iss: String,
    /// Subject: the identity provider's stable identifier for the person.
    pub sub: String,
    pub name: Option<String>,
    pub exp: i64,
    #[serde(default)]
    pub groups: Vec<String>,
    /// Tenant the person signed in to, set by the provider's org claim mapper.
    pub org: String,
}

#[derive(Debug)]
pub enum ClaimsError {
    Missing,
    Invalid,
}

pub fn verify(bearer: Option<&str>, key: &DecodingKey, issuer: &str) -> Result<IdTokenClaims, ClaimsError> {
    let token = bearer.ok_or(ClaimsError::Missing)?;
    let mut v = Validation::new(Algorithm::RS256);
    v.set_issuer(&[issuer]);
    decode::<IdTokenClaims>(token, key, &v)
        .map(|d| d.claims)
        .map_err(|_| ClaimsError::Invalid)
}
