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
    // Parsing of agent documents
    (
        "R-PARSE-1",
        "a field the document format does not define is rejected, never ignored",
    ),
    (
        "R-PARSE-2",
        "evidence of a kind the skill does not admit is refused, and never grounds a claim",
    ),
    ("R-PARSE-3", "a confidence below 0 or above 1 is rejected"),
    (
        "R-PARSE-4",
        "a target key of unknown kind or with a missing coordinate is rejected",
    ),
    (
        "R-PARSE-5",
        "a deficiency code that does not exist is rejected",
    ),
    (
        "R-PARSE-6",
        "a proposal that is not JSON, or whose patch value is not a value the field admits, is rejected",
    ),
    (
        "R-PARSE-7",
        "every rejection names the document, the field and the reason, and no input makes the engine panic",
    ),
    // Binding of a proposal to its case
    (
        "R-BIND-1",
        "a proposal whose target is not the case's target is refused",
    ),
    (
        "R-BIND-2",
        "a proposal whose patch.target is not its own target is refused, not aligned",
    ),
    (
        "R-BIND-3",
        "a proposal for another skill than the case's is refused",
    ),
    (
        "R-BIND-4",
        "a proposal for another skill version than the case's is refused",
    ),
    (
        "R-BIND-5",
        "a proposal for another deficiency than the case's is refused",
    ),
    (
        "R-BIND-7",
        "a proposal.json written by hand goes through exactly the checks any proposal does",
    ),
    // Evidence
    (
        "R-EV-1",
        "evidence enters only as a coordinate the engine reads; an excerpt the agent wrote is never taken as verified",
    ),
    (
        "R-EV-2",
        "absolute paths, `..` escapes and symlinks that lead out of the repository are refused",
    ),
    (
        "R-EV-3",
        "a path that no inspect scope of the case matches is refused",
    ),
    (
        "R-EV-4",
        "a missing file, a directory, a binary file and a file that is not UTF-8 are refused",
    ),
    (
        "R-EV-5",
        "a line range that is reversed, starts at 0 or runs past the end of the file is refused",
    ),
    (
        "R-EV-6",
        "the excerpt is exactly the bytes read, with their hash, kind, revision, path, lines and acquisition time",
    ),
    (
        "R-EV-7",
        "an artifact's id comes from its coordinate, so the same text at two coordinates has two ids",
    ),
    (
        "R-EV-8",
        "the evidence kind is decided by the inspect scope the path matched (comment-only excerpts are comment), never by the agent",
    ),
    (
        "R-EV-9",
        "local artifacts are verified, external ones unverified with a reason, and one status field says which",
    ),
    (
        "R-EV-11",
        "evidence cannot be forged before the freeze or edited after it without the next rail refusing",
    ),
    // Claims and predicates
    (
        "R-CL-1",
        "a claim's predicate is one of the skill's output or supporting predicates",
    ),
    (
        "R-CL-2",
        "add-claim refuses a predicate outside the skill's vocabulary",
    ),
    (
        "R-CL-3",
        "a hand-written claims.json with an out-of-vocabulary predicate is caught again at freeze and validation",
    ),
    (
        "R-CL-4",
        "a claim cites artifacts that exist and carries no excerpt of its own",
    ),
    (
        "R-CL-5",
        "a claim that fails stage 1 stays in the record, marked rejected with its reasons",
    ),
    (
        "R-CL-6",
        "accepted claims giving one output predicate two different values are recorded as a conflict",
    ),
    // Validation and grounding
    (
        "R-VAL-1",
        "a patch may write only the skill's writable fields",
    ),
    (
        "R-VAL-2",
        "type, required, name, location and enum are never writable",
    ),
    (
        "R-VAL-3",
        "each patched value is exactly the value of an accepted grounding claim on its output predicate",
    ),
    (
        "R-VAL-4",
        "the noisy-or strength of a patched value's grounding, one count per file, meets the skill's minimum",
    ),
    (
        "R-VAL-5",
        "fields that need verified grounding get it from the artifacts grounding that value, not from others",
    ),
    (
        "R-VAL-6",
        "a proposal cannot pass while its output predicate has an unresolved conflict",
    ),
    (
        "R-VAL-7",
        "descriptions are non-empty and say more than the name; enumerated values come from the vocabulary",
    ),
    (
        "R-VAL-8",
        "the verdict that counts is the validation record in lifecycle.json, with the proposal's hash",
    ),
    // Lifecycle and honest outcomes
    (
        "R-LC-1",
        "a run moves open → research_frozen → proposal_frozen → finalized → closed and no other way",
    ),
    (
        "R-LC-2",
        "an honest decline can finalize straight from open",
    ),
    (
        "R-LC-3",
        "each freeze records the hash of every file it freezes, and a later change is reported as tampering",
    ),
    (
        "R-LC-4",
        "no later stage can change what an earlier stage froze",
    ),
    (
        "R-LC-5",
        "proposal_generated needs a passing validation record in lifecycle.json",
    ),
    (
        "R-LC-6",
        "supported needs no patch, a current value, an accepted claim asserting exactly it, the bars met and no conflict",
    ),
    ("R-LC-7", "a value that is missing can never be supported"),
    (
        "R-LC-8",
        "finalize refuses when critique.json does not agree with the lifecycle record",
    ),
    (
        "R-LC-9",
        "every outcome other than proposal_generated still carries the artifacts, claims, conflicts and critique",
    ),
    (
        "R-LC-10",
        "a critique by the investigating process itself is labelled self, never independent",
    ),
    // Rails
    (
        "R-RAIL-1",
        "the same idempotency key with the same body returns the saved outcome without running again",
    ),
    (
        "R-RAIL-2",
        "the same idempotency key with another body is a conflict, exit code 3",
    ),
    (
        "R-RAIL-3",
        "rails on one run serialise under its lock: concurrent calls lose no update and never interleave",
    ),
    (
        "R-RAIL-4",
        "every rail call is in journal.jsonl with its key, body hash, outcome and time",
    ),
    // Investigation tools
    (
        "R-TOOL-1",
        "a query batch, answered or refused, leaves the repository byte-for-byte as it was",
    ),
    (
        "R-TOOL-2",
        "the tools read only inside the inspect scopes, with add-evidence's path rules: no absolute path, no `..`, no symlink out",
    ),
    (
        "R-TOOL-3",
        "an unknown operation or field, an invalid argument or a repeated request id refuses the whole batch",
    ),
    (
        "R-TOOL-4",
        "every request of a batch is preflighted before any is answered; a refused batch returns no partial result",
    ),
    (
        "R-TOOL-5",
        "a tool limit refuses the excess (request, batch, files, bytes, rows, matches, context, result); nothing is silently dropped",
    ),
    (
        "R-TOOL-6",
        "pages are stable: total, truncated and nextOffset, in requested file order then line order",
    ),
    (
        "R-TOOL-7",
        "every answer carries the source sha256 and 1-based lines or the row's JSON Pointer, and the batch and request hashes",
    ),
    (
        "R-TOOL-8",
        "snapshot equality is typed (true, 1, \"1\" and 1.0 differ) and SQL-like text is only ever data",
    ),
    (
        "R-TOOL-9",
        "a batch for another run, or for a finalized, closed or stale run, is refused",
    ),
    // Drivers and containment
    (
        "R-DRV-1",
        "each line the agent writes to stdout or stderr reaches the caller and the execution log as it arrives, not when the agent exits",
    ),
    (
        "R-DRV-2",
        "a timeout or a cancellation kills the agent's whole process group: nothing it started keeps running",
    ),
    (
        "R-DRV-3",
        "a missing program is named with how to install it; a failed run gives its exit code or signal and its last stderr lines",
    ),
    (
        "R-DRV-4",
        "the execution record has RFC 3339 start and end times in order, a duration that agrees with them, and the token and cost accounting the agent itself reported (Codex prints no cost: its printed tokens at a stated rate)",
    ),
    (
        "R-CON-1",
        "native execution refuses to start without --allow-degraded-native, with the seed's message word for word",
    ),
    (
        "R-CON-2",
        "degraded execution is never chosen for the caller: a sandbox that cannot be had is an error, not a fall back to native",
    ),
    (
        "R-CON-3",
        "every run records an attestation listing each containment guarantee as enforced or not enforced",
    ),
    (
        "R-CON-4",
        "the repository is recorded before and after a run, and any change to it is a containment violation (exit code 4)",
    ),
    (
        "R-CON-5",
        "the agent's process sees only the allowlisted variables and the engine's overrides, never the ambient environment",
    ),
    (
        "R-CON-6",
        "in the sandbox the repository and the run root are read-only and only workspace/ and output/ can be written",
    ),
    (
        "R-CON-7",
        "the sandbox does not mount the labels directory, so the agent can neither read nor list it",
    ),
    (
        "R-CON-8",
        "in the sandbox the only network path is the bridge: it reaches the allowed model endpoints and refuses and logs the rest",
    ),
    // Close and reconcile
    (
        "R-BIND-6",
        "binding is checked when the proposal is parsed and again at close, even if the engine's own records were forged",
    ),
    (
        "R-EV-10",
        "a source edited after its excerpt was acquired makes close fail",
    ),
    (
        "R-REC-1",
        "close re-reads every frozen artifact from the repository and re-runs validation",
    ),
    (
        "R-REC-2",
        "the eval delta shows the target's deficiency closed and no new deficiency",
    ),
    (
        "R-REC-3",
        "a proposal that fails validation at close reconciles to reject",
    ),
    (
        "R-REC-4",
        "a patched value grounded only by unverified artifacts goes to review",
    ),
    (
        "R-REC-5",
        "a safety-sensitive skill's proposal goes to review",
    ),
    (
        "R-REC-6",
        "overwriting an existing, non-deficient value goes to review",
    ),
    (
        "R-REC-7",
        "a conflicted result, or a safety deficiency nobody could ground, escalates to a human",
    ),
    (
        "R-REC-8",
        "apply writes only auto results, or review results someone approved, with case key, run id and artifact ids",
    ),
    (
        "R-DRV-5",
        "tests drive whole cases through a scripted in-process driver with no LLM",
    ),
    // The effectiveness battery
    (
        "R-BAT-1",
        "the labels lie outside every inspect scope: a corpus, results directory or scenario repository that could reach them is refused",
    ),
    (
        "R-BAT-2",
        "a label is read only after its trial's case has finalized",
    ),
    (
        "R-BAT-3",
        "any label's canary in anything the agent produced (transcript, workspace, outputs) marks the trial contaminated, naming the file",
    ),
    (
        "R-BAT-4",
        "a cheating driver that reads the labels, or is handed a canary, is flagged every time (the negative control)",
    ),
    (
        "R-BAT-5",
        "the label set's seal is recorded before the first trial and re-taken after the last; a change fails the run",
    ),
    (
        "R-BAT-6",
        "the baseline and every other arm start from the same scenario in the same committed state",
    ),
    (
        "R-BAT-7",
        "every trial runs on a fresh copy at a neutral path; nothing the agent sees (paths, brief, environment, arguments) names the class, the scenario, the corpus or the labels",
    ),
    (
        "R-BAT-8",
        "the oracle scores 100% on every scenario; a scenario it cannot pass is named and fails the run",
    ),
    (
        "R-BAT-9",
        "an infrastructure failure is retried up to the limit, then reported apart and left out of every denominator; too many stop the battery",
    ),
    (
        "R-BAT-10",
        "a deterministic arm gives the same outcome on every repeat; a disagreement fails the run",
    ),
    (
        "R-BAT-11",
        "results carry a manifest naming everything two runs must share; resume and merge refuse a different one unless forced, naming the field",
    ),
    (
        "R-BAT-12",
        "a battery killed at any point and resumed gives the same results as one never interrupted",
    ),
    (
        "R-BAT-13",
        "partitions cover every trial exactly once, and all shards merged equal the unpartitioned run",
    ),
    (
        "R-BAT-14",
        "every interval and p-value is recomputable from results.json alone (seeded resampling)",
    ),
    (
        "R-BAT-15",
        "the budget cap is never passed by more than one trial's cost, and the trials not run are listed",
    ),
    (
        "R-BAT-16",
        "harmful and harmful-at-auto (a wrong change reconciled to `auto`) are reported per class and overall",
    ),
    // The engine's gate
    (
        "R-GATE-1",
        "a value reaches `auto` only when a line its claims cite states it by the skill's attestation rules (contract data: each language's unit idioms, retry and redaction patterns, a description's content words), at the skill's strength with comments counting as comments; otherwise review at best, and close.json names the rule and line, or says none matched",
    ),
    (
        "R-GATE-2",
        "two verified frozen excerpts stating different values for a predicate are a conflict recorded at freeze, even when only one side was claimed; it keeps the value from `auto`, and the agent may decline `conflicted`",
    ),
    (
        "R-GATE-3",
        "evidence is read only from the repository as committed at the case's source revision (git objects), or for a repository without a commit from the manifest recorded at open and bound to case.json; never from the cases dir, the workspace, an uncommitted edit or a file written after open",
    ),
    // Project additions
    (
        "X-DRV-1",
        "process drivers configure the agent strictly: Claude Code gets CASE.md as its prompt, the repository through --add-dir, stream-json output, the policy's limits and a tool allowlist with no unrestricted shell or editor; codex runs `exec --json` in the run and keeps its own sandbox natively",
    ),
    (
        "X-OPEN-1",
        "open refuses bad input with exit code 1 and a message naming it, and leaves the cases directory as it was",
    ),
    (
        "X-AIR-1",
        "AIR with an unknown key is refused with the path of that key",
    ),
    // The scenario corpus (issue 6)
    (
        "X-CORPUS-1",
        "`scenarios check` exits 1 listing every problem, and each failure names the file at fault",
    ),
    (
        "X-CORPUS-2",
        "a scenario is sound only when `case open` would accept its skill, target and declared deficiency",
    ),
    (
        "X-CORPUS-3",
        "every scenario has exactly one label and every label names exactly one existing scenario",
    ),
    (
        "X-CORPUS-4",
        "labelled evidence paths are files inside the scenario repository and their line ranges lie inside those files",
    ),
    (
        "X-CORPUS-5",
        "canaries are well-formed and unique and appear in no file under scenarios/; no expected phrase is stated in the scenario's own inputs",
    ),
    (
        "X-CORPUS-6",
        "scenario and label documents are strict: unknown keys, classes, languages and statuses are refused with their path",
    ),
    (
        "X-CORPUS-7",
        "each repository has at least 4 files and 120 lines, each AIR describes the whole target operation (3+ fields, 2+ errors), and the corpus meets the class, language, skill and decline coverage rules",
    ),
    (
        "X-CORPUS-8",
        "labelled values name the skill's writable field with a value its constraint admits; declines carry none",
    ),
    (
        "X-CORPUS-9",
        "a symlink or other non-regular file in the corpus (a label, or anything inside a scenario repository) is named, never followed or silently skipped",
    ),
    (
        "X-CORPUS-10",
        "a `.git` entry inside a scenario repository is named, and the battery refuses the scenario before any git runs on it: the battery commits each copy itself, and no hook runs",
    ),
    (
        "X-DUP-1",
        "a key given twice in one JSON object is refused, naming its path, in every document the engine reads (AIR, proposal, tool request, label, script, battery results)",
    ),
    (
        "X-CAP-1",
        "a document over DOC_BYTES (an AIR at open) is refused naming the file, the cap, its value and ANVIL_MAX_DOC_BYTES; nothing is written, and the same input opens once the cap is raised",
    ),
    (
        "X-CAP-2",
        "an AIR text value over AIR_TEXT_BYTES is refused at load naming its path and the cap, without echoing it; it never reaches case.json or CASE.md",
    ),
    (
        "X-CAP-3",
        "an external evidence excerpt over EXCERPT_BYTES is refused naming the file and the cap; the run is unchanged",
    ),
    (
        "X-CAP-4",
        "a proposal rationale over RATIONALE_BYTES is rejected at `rationale` (too_large) naming the cap; nothing is recorded",
    ),
    (
        "X-CAP-5",
        "a tool request over TOOL_REQUEST_BYTES is refused (request_too_large) naming the cap, from a file and from an endless stdin, which is not read to its end",
    ),
    (
        "X-CAP-6",
        "replay-model answers a request body over REPLAY_BODY_BYTES with a 413 in the API's error shape naming the cap, and keeps serving",
    ),
    (
        "X-CAP-7",
        "mcp serve answers a line over MCP_LINE_BYTES with a JSON-RPC invalid-request error (-32600) naming the cap, and keeps serving",
    ),
    (
        "X-CAP-8",
        "an ANVIL_MAX_<NAME> override that is not a positive whole number (a word, zero, a unit, a sign, a space, empty) is an error naming the variable, never ignored",
    ),
    (
        "X-CAP-9",
        "an external evidence source or uri, or a finalize reason, over NOTE_BYTES is refused (too_large) naming the field and the cap, without echoing it; nothing is written",
    ),
    (
        "X-FIFO-1",
        "an AIR that is a FIFO is refused at open as not a regular file, without blocking; nothing is written",
    ),
    (
        "X-FIFO-2",
        "an excerpt file that is a device or a FIFO is refused as not a regular file, without reading it",
    ),
    (
        "X-FIFO-3",
        "a tool request file that is a FIFO or a device is refused as not a regular file, without blocking",
    ),
    (
        "X-FIFO-4",
        "a script that is a FIFO is refused by replay-model and by case investigate, without blocking",
    ),
    (
        "X-FIFO-5",
        "an input that is a symlink (AIR, excerpt, tool request) is refused as a symlink, never followed",
    ),
    (
        "X-OUT-1",
        "case close --apply onto a device is refused naming it; the device node is kept and the run stays unclosed",
    ),
    (
        "X-OUT-2",
        "case close --apply onto a symlink, a FIFO or a directory is refused naming it; the link's target is not written",
    ),
    (
        "X-OUT-3",
        "air import --out, report show --out and battery merge --out onto a symlink, a FIFO or a device are refused naming it",
    ),
    (
        "X-OUT-4",
        "replay-model --transcript onto a symlink or a FIFO is refused naming it before the server starts",
    ),
    (
        "X-MCP-1",
        "`mcp serve` answers a line that is not JSON with a JSON-RPC parse error (-32700, id null) and keeps serving",
    ),
    (
        "X-PIPE-1",
        "a printing command whose reader closes the pipe early ends quietly, without a panic or backtrace",
    ),
    (
        "X-SEAL-1",
        "the labels seal is sha256 over the canonical label set: independent of key order, changed by any label change, refused for an unreadable label",
    ),
    // The adversarial corpus (conformance/attacks): each attack is refused by name or
    // survived, nothing outside the run changes, and the run verifies or is reported broken.
    (
        "X-TAMP-1",
        "an edit of case.json after open (a re-keyed target, a widened repository) is refused as tampering by the next rail, named by `case verify`, and makes `case show` exit 1",
    ),
    (
        "X-TAMP-2",
        "an edit or deletion of lifecycle.json (a verdict, the state, a frozen hash, a stage record, or before the first rail its run id or open transition) is refused as tampering by the next rail and named by `case verify`",
    ),
    (
        "X-TAMP-3",
        "a journal wiped, deleted, cut short, or with a line edited, inserted or moved is refused as tampering by the next rail, naming journal.jsonl and the broken link; a line the lock anchors is never cut off as torn, by a rail or by `case verify`",
    ),
    (
        "X-TAMP-4",
        "the lock's anchor of the journal, deleted or edited, is refused as tampering; a lost anchor is never silently rebuilt, and the refusal creates no lock",
    ),
    (
        "X-TAMP-5",
        "an output frozen by an earlier stage (evidence, claims, proposal, result), edited or swapped for a link, is refused as tampering by the next rail and named by `case verify`",
    ),
    (
        "X-TAMP-6",
        "a forged record resealed into a consistent journal is still refused: verdicts are re-derived from the frozen inputs by the rails and by `case verify`",
    ),
    (
        "X-TAMP-7",
        "after the journal is wiped, a reused idempotency key never executes a new body",
    ),
    (
        "X-CRASH-1",
        "a rail killed at any commit point (half a staged file, staged, journaled, partly renamed) leaves its effect wholly present iff its journal line committed, a run that `case verify` passes without writing anything, and a rerun that recovers it (no leftovers) and replays the committed call or runs it afresh",
    ),
    (
        "X-LINK-1",
        "an agent-writable document planted as a symlink to a file outside the run is refused, never followed, and nothing of its target reaches the run's records",
    ),
    (
        "X-LINK-2",
        "a FIFO planted where the engine reads (an output document, the journal, the lock) is refused without hanging",
    ),
    (
        "X-LINK-3",
        "an engine-owned file (case.json, lifecycle.json, journal.jsonl) swapped for a symlink is refused and nothing is written through it",
    ),
    (
        "X-LINK-4",
        "output/ swapped for a symlink to a directory outside the run is refused by name; nothing is read, written or deleted through it",
    ),
    (
        "X-CONC-1",
        "64 concurrent opens of one case all give distinct, complete runs that verify",
    ),
    (
        "X-CONC-2",
        "64 concurrent rails on one run all land: every artifact present, one journal line each, the chain intact, and a verifier racing them never sees a broken seal",
    ),
    (
        "X-CONC-3",
        "64 concurrent calls with one idempotency key execute exactly once: the rest replay (same body) or are conflicts (other bodies)",
    ),
    (
        "X-TRAV-1",
        "add-evidence through the CLI with `..`, an absolute path, a symlink leaving the repository or an out-of-scope file is refused with its kind and writes nothing but the journaled refusal",
    ),
    (
        "X-TRAV-2",
        "a file inside a run directory (the agent's own workspace or output, when the cases dir lies in the repository) is never evidence, through the rail or a hand-written evidence.json",
    ),
    (
        "X-FLOOD-1",
        "a document or claim value nested 10,000 deep is refused by name, without a panic or a stack overflow, and never makes the run unreadable",
    ),
    (
        "X-FLOOD-2",
        "a huge claim value or an oversized run document is refused by name and never copied into the lifecycle or the journal",
    ),
];
