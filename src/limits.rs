//! Named size caps on what the engine reads: one table, each cap with a default and an
//! environment variable that raises it.
//!
//! Invariant: every input read from an agent or an operator is bounded by a cap in
//! [`Limit`]. A refusal names the input (file or field), the cap, its value and the variable
//! that raises it; an override that is not a positive whole number is an error naming the
//! variable — never ignored, never replaced by the default.

use std::io::{self, Read};
use std::path::Path;

/// One named cap. [`Limit::value`] is its default unless `ANVIL_MAX_<NAME>` overrides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Limit {
    /// Bytes of one JSON or YAML document read from a file: AIR, OpenAPI, run documents,
    /// scripts, labels and scenario metadata.
    DocBytes,
    /// Bytes of one battery results document (results.json, a trial record, the manifest).
    ResultsBytes,
    /// Bytes of one text value in an AIR (a description, an error message, any string).
    AirTextBytes,
    /// Bytes of a proposal's `rationale`.
    RationaleBytes,
    /// Bytes of an external evidence excerpt (`add-external-evidence --excerpt-file`).
    ExcerptBytes,
    /// Bytes of one HTTP request body the replay model accepts.
    ReplayBodyBytes,
    /// Bytes of one JSON-RPC line `mcp serve` accepts.
    McpLineBytes,
    /// Bytes of a `case query --request` document as read (the case's `requestBytes` tool
    /// limit is checked after it).
    ToolRequestBytes,
    /// Bytes of a short text a rail records as given: an external evidence source or uri,
    /// a finalize reason.
    NoteBytes,
    /// Nodes the YAML aliases of one OpenAPI description repeat: an alias costs every node of
    /// what it names, so a few hundred bytes of nested aliases cannot expand without bound.
    YamlAliasNodes,
    /// Schema nodes one OpenAPI import expands into fields: a `$ref` costs again at every
    /// use, so components that point at each other cannot multiply without bound.
    ImportNodes,
}

/// A row of the table: the cap's name (the variable is `ANVIL_MAX_<name>`), its default,
/// what it counts and what it bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub limit: Limit,
    pub name: &'static str,
    pub default: u64,
    /// What the cap counts: `bytes`, or `nodes` for the expansion caps.
    pub unit: &'static str,
    pub bounds: &'static str,
}

const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;

/// Every cap, in the order of [`Limit`]'s variants.
pub const TABLE: [Spec; 11] = [
    Spec {
        limit: Limit::DocBytes,
        name: "DOC_BYTES",
        default: 64 * MIB,
        unit: "bytes",
        bounds: "one JSON/YAML document read from a file (AIR, OpenAPI, scripts, labels, scenarios)",
    },
    Spec {
        limit: Limit::ResultsBytes,
        name: "RESULTS_BYTES",
        default: 512 * MIB,
        unit: "bytes",
        bounds: "one battery results document (results.json, a trial record, the manifest)",
    },
    Spec {
        limit: Limit::AirTextBytes,
        name: "AIR_TEXT_BYTES",
        default: 64 * KIB,
        unit: "bytes",
        bounds: "one text value in an AIR (description, error message, any string)",
    },
    Spec {
        limit: Limit::RationaleBytes,
        name: "RATIONALE_BYTES",
        default: 64 * KIB,
        unit: "bytes",
        bounds: "a proposal's rationale",
    },
    Spec {
        limit: Limit::ExcerptBytes,
        name: "EXCERPT_BYTES",
        default: MIB,
        unit: "bytes",
        bounds: "an external evidence excerpt (--excerpt-file)",
    },
    Spec {
        limit: Limit::ReplayBodyBytes,
        name: "REPLAY_BODY_BYTES",
        // The Messages API's own request cap; a parsed body costs many times its bytes.
        default: 32 * MIB,
        unit: "bytes",
        bounds: "one HTTP request body of replay-model",
    },
    Spec {
        limit: Limit::McpLineBytes,
        name: "MCP_LINE_BYTES",
        default: 4 * MIB,
        unit: "bytes",
        bounds: "one JSON-RPC line of mcp serve",
    },
    Spec {
        limit: Limit::ToolRequestBytes,
        name: "TOOL_REQUEST_BYTES",
        default: MIB,
        unit: "bytes",
        bounds: "a case query --request document as read",
    },
    Spec {
        limit: Limit::NoteBytes,
        name: "NOTE_BYTES",
        default: 64 * KIB,
        unit: "bytes",
        bounds: "an external evidence source or uri, a finalize reason",
    },
    Spec {
        limit: Limit::YamlAliasNodes,
        name: "YAML_ALIAS_NODES",
        default: 1_000_000,
        unit: "nodes",
        bounds: "nodes the YAML aliases of one OpenAPI description repeat",
    },
    Spec {
        limit: Limit::ImportNodes,
        name: "IMPORT_NODES",
        default: 1_000_000,
        unit: "nodes",
        bounds: "schema nodes one OpenAPI import expands into fields (a $ref at every use)",
    },
];

/// A cap was passed, or its override is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error(
        "environment variable `{var}` is `{value}`: {reason}; set a whole number of {unit} of at \
         least 1, or unset it for the default ({default})"
    )]
    BadOverride {
        var: String,
        value: String,
        reason: &'static str,
        unit: &'static str,
        default: u64,
    },
    #[error(
        "is {}, over the {name} cap of {cap} {unit} (set {var}=<{unit}> to raise it)",
        actual.map_or_else(|| "larger".to_string(), |n| format!("{n} {unit}"))
    )]
    Exceeded {
        name: &'static str,
        var: String,
        cap: u64,
        unit: &'static str,
        /// The size when known (a stream is refused after `cap + 1` bytes).
        actual: Option<u64>,
    },
}

impl Limit {
    pub const ALL: [Limit; 11] = [
        Limit::DocBytes,
        Limit::ResultsBytes,
        Limit::AirTextBytes,
        Limit::RationaleBytes,
        Limit::ExcerptBytes,
        Limit::ReplayBodyBytes,
        Limit::McpLineBytes,
        Limit::ToolRequestBytes,
        Limit::NoteBytes,
        Limit::YamlAliasNodes,
        Limit::ImportNodes,
    ];

    #[must_use]
    pub fn spec(self) -> &'static Spec {
        // The table is in declaration order (a unit test holds it to that).
        &TABLE[self as usize]
    }

    /// The cap's name, e.g. `DOC_BYTES`.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The variable that overrides it, e.g. `ANVIL_MAX_DOC_BYTES`.
    #[must_use]
    pub fn var(self) -> String {
        format!("ANVIL_MAX_{}", self.name())
    }

    #[must_use]
    pub fn default_value(self) -> u64 {
        self.spec().default
    }

    /// The cap in force: the override when the variable is set, else the default.
    ///
    /// # Errors
    ///
    /// An override that is set but not a valid cap (see [`Limit::parse_override`]).
    pub fn value(self) -> Result<u64, LimitError> {
        match std::env::var_os(self.var()) {
            None => Ok(self.default_value()),
            Some(raw) => self.parse_override(&raw.to_string_lossy()),
        }
    }

    /// Parses an override strictly: ASCII digits only (no sign, space, unit or separator),
    /// at least 1, at most `u64::MAX`.
    ///
    /// # Errors
    ///
    /// Anything but ASCII digits, zero, or a number over `u64::MAX`.
    pub fn parse_override(self, raw: &str) -> Result<u64, LimitError> {
        let bad = |reason| LimitError::BadOverride {
            var: self.var(),
            value: raw.chars().take(64).collect(),
            reason,
            unit: self.spec().unit,
            default: self.default_value(),
        };
        if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("not a whole number"));
        }
        match raw.parse::<u64>() {
            Ok(0) => Err(bad("zero would refuse everything")),
            Ok(n) => Ok(n),
            Err(_) => Err(bad("too large")),
        }
    }

    /// The refusal for an input of `actual` bytes (`None`: more than the cap, size unknown).
    #[must_use]
    pub fn exceeded(self, cap: u64, actual: Option<u64>) -> LimitError {
        LimitError::Exceeded {
            name: self.name(),
            var: self.var(),
            cap,
            unit: self.spec().unit,
            actual,
        }
    }

    /// Refuses a length over the cap in force.
    ///
    /// # Errors
    ///
    /// `len` over the cap in force, or an invalid override.
    pub fn check(self, len: usize) -> Result<(), LimitError> {
        let cap = self.value()?;
        let len = len as u64;
        if len > cap {
            return Err(self.exceeded(cap, Some(len)));
        }
        Ok(())
    }
}

/// Why a capped read failed: the cap (passed, or its override malformed), or the file
/// itself (missing, a symlink, a FIFO, a device, a directory, unreadable).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Limit(#[from] LimitError),
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<ReadError> for io::Error {
    /// For callers whose errors carry an `io::Error`: a limit refusal keeps its message.
    fn from(e: ReadError) -> io::Error {
        match e {
            ReadError::Limit(l) => io::Error::new(io::ErrorKind::InvalidInput, l),
            ReadError::Io(e) => e,
        }
    }
}

impl ReadError {
    /// The limit refusal, when that is what this is.
    #[must_use]
    pub fn limit(&self) -> Option<&LimitError> {
        match self {
            ReadError::Limit(l) => Some(l),
            ReadError::Io(_) => None,
        }
    }
}

/// Reads a regular file of at most the cap in force for `limit`: a symlink is never
/// followed, and a FIFO, a device or a directory is refused without blocking (see
/// [`crate::fsio::read_regular`]). The caller names the file in its error.
///
/// # Errors
///
/// A symlink, FIFO, device or directory, a file over the cap, an invalid override, or an
/// I/O error.
pub fn read_capped(path: &Path, limit: Limit) -> Result<Vec<u8>, ReadError> {
    let cap = limit.value()?;
    crate::fsio::read_regular(path, cap).map_err(|e| over_cap(path, limit, cap, e))
}

/// `read_regular` reports a size over the cap as `InvalidInput` on a regular file (its
/// other `InvalidInput` refusals are for what is not one): name the cap then.
fn over_cap(path: &Path, limit: Limit, cap: u64, e: io::Error) -> ReadError {
    if e.kind() != io::ErrorKind::InvalidInput {
        return ReadError::Io(e);
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {
            ReadError::Limit(limit.exceeded(cap, (meta.len() > cap).then_some(meta.len())))
        }
        _ => ReadError::Io(e),
    }
}

/// Reads all of `reader` up to the cap in force for `limit` (stdin, a socket): refused
/// after `cap + 1` bytes, without reading further.
///
/// # Errors
///
/// More than the cap in force, an invalid override, or an I/O error reading.
pub fn read_stream_capped(reader: impl Read, limit: Limit) -> Result<Vec<u8>, ReadError> {
    let cap = limit.value()?;
    let mut out = Vec::new();
    reader.take(cap.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > cap {
        return Err(ReadError::Limit(limit.exceeded(cap, None)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_has_its_row_in_order_and_names_are_unique() {
        for (i, l) in Limit::ALL.into_iter().enumerate() {
            assert_eq!(TABLE[i].limit, l);
            assert_eq!(l as usize, i);
        }
        let mut names: Vec<_> = TABLE.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
        assert!(TABLE.iter().all(|s| s.default > 0));
    }

    #[test]
    fn overrides_are_parsed_strictly() {
        let l = Limit::DocBytes;
        assert_eq!(l.parse_override("1"), Ok(1));
        assert_eq!(l.parse_override("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "",
            "0",
            "00",
            "-1",
            "+5",
            " 5",
            "5 ",
            "1e6",
            "64M",
            "1_000",
            "0x10",
            "1.5",
            "abc",
            "18446744073709551616",
        ] {
            let e = l.parse_override(bad).unwrap_err();
            assert!(
                e.to_string().contains("`ANVIL_MAX_DOC_BYTES`"),
                "{bad:?}: {e}"
            );
        }
    }

    #[test]
    fn a_refusal_names_the_cap_its_value_and_how_to_raise_it() {
        let e = Limit::ExcerptBytes.exceeded(10, Some(11)).to_string();
        assert_eq!(
            e,
            "is 11 bytes, over the EXCERPT_BYTES cap of 10 bytes \
             (set ANVIL_MAX_EXCERPT_BYTES=<bytes> to raise it)"
        );
        let e = Limit::McpLineBytes.exceeded(10, None).to_string();
        assert!(
            e.starts_with("is larger, over the MCP_LINE_BYTES cap of 10"),
            "{e}"
        );
    }

    #[test]
    fn a_capped_read_refuses_a_larger_file_and_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        let cap = Limit::DocBytes.default_value();
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(cap + 1).unwrap();
        let e = read_capped(&big, Limit::DocBytes).unwrap_err();
        assert_eq!(
            e.limit(),
            Some(&Limit::DocBytes.exceeded(cap, Some(cap + 1)))
        );

        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&big, &link).unwrap();
        let e = read_capped(&link, Limit::DocBytes).unwrap_err();
        assert!(
            e.limit().is_none() && e.to_string().contains("symlink"),
            "{e}"
        );

        let e = read_capped(Path::new("/dev/zero"), Limit::DocBytes).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_capped(dir.path(), Limit::DocBytes).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn a_replay_request_body_is_capped_at_the_messages_api_size() {
        // A parsed body costs many times its bytes: at 256 MiB one request could take the
        // server past any memory it has. The Messages API's own cap is 32 MB.
        assert!(Limit::ReplayBodyBytes.default_value() <= 32 * MIB);
    }

    #[test]
    fn the_expansion_caps_count_nodes_and_say_so() {
        let e = Limit::YamlAliasNodes.exceeded(10, None).to_string();
        assert_eq!(
            e,
            "is larger, over the YAML_ALIAS_NODES cap of 10 nodes \
             (set ANVIL_MAX_YAML_ALIAS_NODES=<nodes> to raise it)"
        );
        let e = Limit::ImportNodes
            .parse_override("x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a whole number of nodes"), "{e}");
    }

    #[test]
    fn a_capped_stream_stops_one_byte_past_the_cap() {
        let cap = Limit::ToolRequestBytes.default_value();
        let ok = read_stream_capped(io::repeat(b'x').take(cap), Limit::ToolRequestBytes);
        assert_eq!(ok.unwrap().len() as u64, cap);
        // An endless stream is refused, not read to the end.
        let e = read_stream_capped(io::repeat(b'x'), Limit::ToolRequestBytes).unwrap_err();
        assert!(e.limit().is_some(), "{e}");
    }
}
