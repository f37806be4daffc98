use console_bff::claims::{ClaimsError, IdTokenClaims};
use console_bff::handlers::session::session_view;

fn claims(groups: &[&str]) -> IdTokenClaims {
    IdTokenClaims {
        iss: "https://login.example-idp.com".into(),
        sub: "00u1a2b3c4D5e6F7g8h9".into(),
        name: Some("Ada Lovelace".into()),
        exp: 1_735_689_600,
        groups: groups.iter().map(|g| g.to_string()).collect(),
        org: "acme".into(),
    }
}

#[test]
fn user_id_is_the_subject_of_the_id_token() {
    let view = session_view(Ok(claims(&["console-admin"]))).unwrap();
    assert_eq!(view.user_id, "00u1a2b3c4D5e6F7g8h9");
    assert_eq!(view.roles, vec!["admin".to_string()]);
}

#[test]
fn no_console_group_is_forbidden() {
    let err = session_view(Ok(claims(&["billing-viewer"]))).unwrap_err();
    assert_eq!(err.1.code, "NO_CONSOLE_ACCESS");
}

#[test]
fn missing_token_is_not_signed_in() {
    let err = session_view(Err(ClaimsError::Missing)).unwrap_err();
    assert_eq!(err.1.code, "NOT_SIGNED_IN");
}
