//! The environment an agent process gets: an allowlist over the ambient environment, plus
//! overrides chosen by the engine (HOME pointed into the run's workspace, endpoints, keys).
//!
//! Invariant: a variable reaches the child only if the allowlist names it — exactly, or by a
//! `PREFIX*` pattern with a non-empty prefix — or it is an override. The ambient environment
//! is never passed wholesale: a bare `*` matches nothing.

use std::collections::BTreeMap;
use std::path::Path;

/// What every agent may inherit: the program search path and the locale.
pub const BASE_ALLOW: &[&str] = &["PATH", "LANG", "LANGUAGE", "LC_*", "TZ"];

/// The child's environment: the `ambient` variables the `allow` patterns name, then
/// `overrides` (which win over an ambient variable of the same name).
///
/// A pattern is an exact name, or a prefix followed by `*` (`ANTHROPIC_*`). A pattern that is
/// only `*` matches nothing, so no allowlist can hand over the whole ambient environment.
pub fn allowlisted_env(
    ambient: impl IntoIterator<Item = (String, String)>,
    allow: &[&str],
    overrides: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = ambient
        .into_iter()
        .filter(|(name, _)| is_allowed(name, allow))
        .collect();
    env.extend(overrides);
    env
}

/// Whether `name` is named by one of the `allow` patterns.
#[must_use]
pub fn is_allowed(name: &str, allow: &[&str]) -> bool {
    allow.iter().any(|pattern| match pattern.strip_suffix('*') {
        Some(prefix) => !prefix.is_empty() && name.starts_with(prefix),
        None => name == *pattern,
    })
}

/// The engine's own environment, as UTF-8 pairs. A variable whose name or value is not
/// UTF-8 is skipped rather than mangled (and, unlike `std::env::vars`, never panics).
#[must_use]
pub fn ambient() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

/// Overrides that give the agent a home of its own under `home`: `HOME` and the XDG base
/// directories, so configuration and caches it writes stay inside the run. `None` when
/// `home` is not UTF-8 (a mangled path would silently point somewhere else).
#[must_use]
pub fn home_overrides(home: &Path) -> Option<BTreeMap<String, String>> {
    let home = home.to_str()?;
    let mut env = BTreeMap::new();
    env.insert("HOME".to_string(), home.to_string());
    for (name, sub) in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
    ] {
        env.insert(name.to_string(), format!("{home}/{sub}"));
    }
    Some(env)
}
