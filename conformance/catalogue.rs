//! The rules this suite proves, in this project's words. Ids follow the shared rule list;
//! `X-` ids are this project's additions.

pub const RULES: &[(&str, &str)] = &[
    // Identity and runs
    (
        "R-ID-1",
        "a case key is `<skill>--<target-key>` and the same pair always gives the same key",
    ),
    (
        "R-ID-2",
        "a case key is safe as one path segment: no separator, no `..`, nothing a shell treats specially",
    ),
    (
        "R-ID-3",
        "two different (skill, target) pairs never get the same case key, folded or not",
    ),
    (
        "R-ID-4",
        "open always makes a new run directory and writes nothing into an earlier run",
    ),
    (
        "R-ID-5",
        "a new run's output/ is empty; a later open never sees an earlier run's outputs",
    ),
    (
        "R-ID-6",
        "case.json records runId, caseKey, airHash, sourceRevision, skill, skillVersion, policyHash, executor, createdAt",
    ),
    (
        "R-ID-7",
        "continuing a run means naming it with --resume; --replace is explicit and keeps the replaced run",
    ),
    (
        "R-ID-8",
        "a run whose airHash, sourceRevision, skillVersion or policyHash no longer matches is stale and is not used",
    ),
    (
        "R-ID-9",
        "concurrent opens of one case key each produce a distinct, complete run",
    ),
    (
        "R-ID-10",
        "files are written atomically and a run is never visible half-written",
    ),
    // Canonical document and views
    (
        "R-DOC-1",
        "case.json is the only authored input and is never rewritten after open",
    ),
    (
        "R-DOC-2",
        "CASE.md and the proposal schema are regenerated from case.json alone",
    ),
    (
        "R-DOC-3",
        "a view that differs from its regeneration is reported as drift",
    ),
    (
        "R-DOC-4",
        "the per-case schema fixes skill, skillVersion, deficiency, target and patch.target to the case's values",
    ),
    (
        "R-DOC-5",
        "the per-case schema limits claim predicates to the skill's set and patch.set to its writable fields",
    ),
    (
        "R-DOC-6",
        "a document is valid against the per-case schema exactly when the parser accepts it",
    ),
    (
        "R-DOC-7",
        "the brief names the hash of the case.json it came from and carries the fixed working-discipline block",
    ),
    // Project additions
    (
        "X-OPEN-1",
        "open refuses bad input with exit code 1 and a message naming it, and leaves the cases directory as it was",
    ),
    (
        "X-AIR-1",
        "AIR with an unknown key is refused with the path of that key",
    ),
];
