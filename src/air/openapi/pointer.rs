//! JSON Pointers (RFC 6901): building them while walking a document, reading the ones a
//! local `$ref` holds, and showing them in messages.
//!
//! Invariant: a pointer held as a `String` is always in its plain RFC 6901 form (`""` for
//! the root, `/paths/~1pets/get` for an operation); only [`show`] adds the `#`.

/// Appends one reference token to `pointer`, escaping `~` and `/`.
pub(crate) fn push(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// `pointer` with an array index appended.
pub(crate) fn push_index(pointer: &str, index: usize) -> String {
    format!("{pointer}/{index}")
}

/// How a pointer reads in a message: as the URI fragment a `$ref` would hold (`#` is the
/// root).
#[must_use]
pub fn show(pointer: &str) -> String {
    format!("#{pointer}")
}

/// Why a `$ref` string is not a local JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefError {
    /// The reference names another document (or is a bare name).
    External,
    /// A `#…` fragment that is not a JSON Pointer (an anchor, a bad escape).
    Malformed(String),
}

/// The reference tokens of a local `$ref` (`#/components/schemas/Pet`), percent-decoded
/// and unescaped.
pub(crate) fn parse_ref(reference: &str) -> Result<Vec<String>, RefError> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err(RefError::External);
    };
    let fragment = percent_decode(fragment)
        .ok_or_else(|| RefError::Malformed("bad percent-encoding".into()))?;
    if fragment.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = fragment.strip_prefix('/') else {
        return Err(RefError::Malformed(
            "a fragment that is not a JSON Pointer (plain-name anchors are not supported)".into(),
        ));
    };
    rest.split('/').map(unescape).collect()
}

/// The plain pointer text of `tokens`.
pub(crate) fn join(tokens: &[String]) -> String {
    tokens.iter().fold(String::new(), |acc, t| push(&acc, t))
}

fn unescape(token: &str) -> Result<String, RefError> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('~'),
            Some('1') => out.push('/'),
            _ => {
                return Err(RefError::Malformed(format!(
                    "`~` must be followed by 0 or 1 in `{token}`"
                )));
            }
        }
    }
    Ok(out)
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_escape_and_unescape() {
        let p = push(&push("", "paths"), "/pets/{id}");
        assert_eq!(p, "/paths/~1pets~1{id}");
        assert_eq!(
            parse_ref("#/paths/~1pets~1%7Bid%7D").unwrap(),
            ["paths", "/pets/{id}"]
        );
        assert_eq!(parse_ref("#/a~0b").unwrap(), ["a~b"]);
        assert_eq!(join(&["a~b".into(), "c/d".into()]), "/a~0b/c~1d");
    }

    #[test]
    fn non_local_references_are_told_apart() {
        assert_eq!(parse_ref("other.yaml#/x"), Err(RefError::External));
        assert!(matches!(parse_ref("#anchor"), Err(RefError::Malformed(_))));
        assert!(matches!(parse_ref("#/a~2"), Err(RefError::Malformed(_))));
        assert_eq!(parse_ref("#").unwrap(), Vec::<String>::new());
    }
}
