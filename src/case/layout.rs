//! Where a run keeps what: the names of its files and folders, and the largest run file
//! the engine reads. The ground floor of `case`: it names, it imports nothing.

/// The canonical case document, immutable after open.
pub const CASE_JSON: &str = "case.json";
/// The lifecycle record: state, frozen hashes, verdict records.
pub const LIFECYCLE_JSON: &str = "lifecycle.json";
/// The hash-chained rail journal.
pub const JOURNAL: &str = "journal.jsonl";
/// What a repository without a commit held at open (R-GATE-3), bound by `sourceDigest`.
pub const SOURCE_JSON: &str = "source.json";
/// The run lock with its fencing counter and journal anchor.
pub const LOCK_FILE: &str = ".lock";
pub const WORKSPACE_DIR: &str = "workspace";
pub const OUTPUT_DIR: &str = "output";

pub const EVIDENCE_JSON: &str = "output/evidence.json";
pub const CLAIMS_JSON: &str = "output/claims.json";
pub const PROPOSAL_JSON: &str = "output/proposal.json";
pub const CRITIQUE_JSON: &str = "output/critique.json";
pub const RESULT_JSON: &str = "output/result.json";
pub const TESTS_JSON: &str = "output/tests.json";

/// The largest run file the engine reads (documents, the journal): a larger one is
/// refused by name rather than loaded.
pub const MAX_RUN_FILE_BYTES: u64 = 256 << 20;
