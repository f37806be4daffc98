//! Generated views of `case.json`: CASE.md (the agent brief) and the proposal schema.
//!
//! Invariant: every function here takes the parsed case document and the hash of its bytes
//! and nothing else, so a view can never state a fact case.json does not hold.

use std::fmt::Write as _;

use serde_json::Value;

use super::doc::{CaseDoc, CasePolicy, TargetSnapshot};
use super::schema::proposal_schema;
use crate::skill::Attestation;

pub const CASE_MD: &str = "CASE.md";
pub const SCHEMA_FILE: &str = "expected-output.schema.json";

/// The fixed working-discipline block every brief carries.
pub const WORKING_DISCIPLINE: &str = "\
- **State your assumptions.** Write them in workspace/ before acting on them; an assumption you cannot check is a reason to decline, not to guess.
- **Keep the change minimal.** Propose exactly the writable value this case asks for, and nothing else.
- **Touch nothing outside output/ and workspace/.** The repository is read-only evidence; other runs are not yours.
- **Verify before you claim.** Every claim points at an artifact the engine read; run `validate` and read its verdict before you finalize.";

/// Both views, rendered from `case` (whose canonical bytes hash to `case_hash`).
#[must_use]
pub fn render_views(case: &CaseDoc, case_hash: &str) -> (String, String) {
    let mut schema = serde_json::to_string_pretty(&proposal_schema(case)).unwrap_or_default();
    schema.push('\n');
    (render_case_md(case, case_hash), schema)
}

fn fmt_value(v: &Value) -> String {
    match v {
        Value::Null => "(none)".into(),
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// The gate section: cite the lines that state the value (R-GATE-1, R-GATE-2).
fn render_attestation(s: &mut String, c: &crate::skill::SkillPolicy) {
    let _ = writeln!(
        s,
        "## Cite the lines that state the value\n\n\
         The engine reads the lines each claim cites with this skill's attestation rules (`policy.contract.attestation` in case.json). \
         A value the cited lines do not state cannot be applied without review, however strong the evidence around it.\n"
    );
    for (predicate, att) in &c.attestation {
        match att {
            Attestation::Patterns { rules } => {
                let mut stated: Vec<&serde_json::Value> = Vec::new();
                for v in rules.iter().flat_map(|r| r.values.iter()) {
                    if !stated.contains(&v) {
                        stated.push(v);
                    }
                }
                // In vocabulary order, when the field has a vocabulary.
                let field = c.field_for_predicate(predicate).unwrap_or_default();
                if let Some(crate::skill::ValueConstraint::Vocabulary { values }) =
                    c.value_constraints.get(field)
                {
                    stated.sort_by_key(|v| values.iter().position(|x| v.as_str() == Some(x)));
                }
                let values: Vec<String> = stated.into_iter().map(fmt_value).collect();
                let _ = writeln!(
                    s,
                    "- `{predicate}`: {} rules, matched on the cited lines that concern the target (name it, or a name or literal it flows into), state {}.",
                    rules.len(),
                    values.join(", ")
                );
            }
            Attestation::ContentWords { share, .. } => {
                let _ = writeln!(
                    s,
                    "- `{predicate}`: at least {}% of the text's content words (beyond the target's name and type, and common words) must appear in the cited lines.",
                    (share * 100.0).round()
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "- A comment line counts as `comment` evidence unless it documents code that names the target.\n\
         - Every frozen excerpt is read the same way: two verified excerpts that state different values are a conflict even if you claim only one of them, and the value cannot be applied without review. Finalize `conflicted` when that is the truth.\n"
    );
}

/// CASE.md: the brief the driver hands the agent.
#[must_use]
pub fn render_case_md(case: &CaseDoc, case_hash: &str) -> String {
    let c = &case.policy.contract;
    let mut s = String::new();
    render_header(&mut s, case, case_hash);
    render_task(&mut s, case);
    render_target(&mut s, &case.target);
    render_evidence(&mut s, &case.policy);
    render_writable(&mut s, c);
    render_attestation(&mut s, c);
    render_prohibitions(&mut s, &case.policy.prohibitions);
    render_method(&mut s, case);
    render_rails(&mut s, case);
    render_expected_output(&mut s, case);
    let _ = writeln!(s, "## Working discipline\n\n{WORKING_DISCIPLINE}");
    s
}

/// The title and where the brief comes from: the run, its inputs and what it replaces.
fn render_header(s: &mut String, case: &CaseDoc, case_hash: &str) {
    let id = &case.identity;
    let _ = writeln!(s, "# Case `{}`\n", id.case_key);
    // A repository without a commit is named by the digest of what it held at open.
    let source = match &id.source_digest {
        Some(digest) => format!(
            "source revision `{}` (source digest `{digest}`)",
            id.source_revision
        ),
        None => format!("source revision `{}`", id.source_revision),
    };
    let _ = writeln!(
        s,
        "> Generated from `case.json` ({case_hash}). Do not edit: `anvil-bench case verify .` reports drift.\n\
         > Built from: run `{}`, AIR `{}`, {}, skill `{}@{}`, policy `{}`, executor `{}`, opened {}.\n",
        id.run_id,
        id.air_hash,
        source,
        id.skill,
        id.skill_version,
        id.policy_hash,
        id.executor,
        id.created_at
    );
    if let Some(prev) = &id.supersedes {
        let _ = writeln!(
            s,
            "> This run replaces run `{prev}`, which is kept unchanged.\n"
        );
    }
}

/// The question, the deficiency, and where the agent works.
fn render_task(s: &mut String, case: &CaseDoc) {
    let _ = writeln!(s, "## Task\n\n{}\n", case.task.question);
    let _ = writeln!(
        s,
        "Deficiency: `{}` — {}.\n\nThe repository under investigation is `{}` (read-only). Your working directory is this run directory: think in `workspace/`, deposit results in `output/`.\n",
        case.task.deficiency, case.task.deficiency_detail, case.inputs.repository
    );
}

/// The target: its key, and what the AIR says about it now.
fn render_target(s: &mut String, t: &TargetSnapshot) {
    let _ = writeln!(
        s,
        "## Target\n\n`{}` — a {} of service `{}`.\n",
        t.key, t.kind, t.service
    );
    if let Some(op) = &t.operation {
        let _ = writeln!(
            s,
            "- Operation `{}`: `{} {}` — {}",
            op.id,
            op.method,
            op.path,
            op.description.as_deref().unwrap_or("(no description)")
        );
        if !op.field_names.is_empty() {
            let _ = writeln!(
                s,
                "- Fields of the operation: {}",
                op.field_names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if !op.error_codes.is_empty() {
            let _ = writeln!(
                s,
                "- Errors of the operation: {}",
                op.error_codes
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if let Some(f) = &t.field {
        let _ = writeln!(
            s,
            "- Field `{}` in `{}`: type `{}`, {}",
            f.name,
            f.location,
            f.ty,
            if f.required { "required" } else { "optional" }
        );
    }
    if let Some(e) = &t.error {
        let _ = writeln!(
            s,
            "- Error `{}`: HTTP {}, message {}",
            e.code,
            e.status,
            fmt_value(&serde_json::to_value(&e.message).unwrap_or(Value::Null))
        );
    }
    for (field, value) in &t.current {
        let inferred = if t.inferred.contains(field) {
            " (set by a heuristic, unproven)"
        } else {
            ""
        };
        let _ = writeln!(s, "- Current `{field}`: {}{inferred}", fmt_value(value));
    }
    s.push('\n');
}

/// What counts as evidence: kinds and strengths, inspect scopes, the grounding bar.
fn render_evidence(s: &mut String, p: &CasePolicy) {
    let c = &p.contract;
    let _ = writeln!(
        s,
        "## Admissible evidence\n\nThe engine classifies every artifact by where it lives; you never choose its kind.\n"
    );
    let _ = writeln!(s, "| kind | strength |\n|---|---|");
    for (kind, strength) in &p.evidence_strength {
        let _ = writeln!(s, "| {kind} | {strength} |");
    }
    let _ = writeln!(
        s,
        "\nInspect scopes, first match wins (a path matching none is inadmissible):\n"
    );
    for scope in &p.inspect_scopes {
        let _ = writeln!(s, "- `{}` → {}", scope.glob, scope.kind);
    }
    let _ = writeln!(
        s,
        "\nA patched value needs grounding of aggregate strength ≥ {} (noisy-or over distinct artifacts: 1 − Π(1 − sᵢ)). Minimum verification: {}.",
        c.minimum_strength,
        serde_json::to_value(c.minimum_verification)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    );
    for (field, bar) in &c.field_verification {
        let bar = serde_json::to_value(bar)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "`{field}` requires {bar} grounding: external sources alone cannot ground it."
        );
    }
    s.push('\n');
}

/// The writable fields, their value constraints and when a value is auto-approved.
fn render_writable(s: &mut String, c: &crate::skill::SkillPolicy) {
    let _ = writeln!(s, "## What you may write\n");
    for out in &c.outputs {
        let constraint = c
            .value_constraints
            .get(&out.field)
            .map(crate::skill::ValueConstraint::describe)
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "- `{}` (asserted by predicate `{}`): {constraint}",
            out.field, out.predicate
        );
    }
    let _ = writeln!(
        s,
        "- Supporting predicates for claims: {}",
        c.supporting_predicates
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        s,
        "- Auto-approval: {}; safety-sensitive: {}.\n",
        c.auto_approve.describe(),
        c.safety_sensitive.describe()
    );
}

/// The prohibitions.
fn render_prohibitions(s: &mut String, prohibitions: &[String]) {
    let _ = writeln!(s, "## You may not\n");
    for rule in prohibitions {
        let _ = writeln!(s, "- {rule}");
    }
    s.push('\n');
}

/// The method's phases and the retrieval hints.
fn render_method(s: &mut String, case: &CaseDoc) {
    let _ = writeln!(s, "## Method\n");
    for (i, phase) in case.procedure.phases.iter().enumerate() {
        let produces = if phase.produces.is_empty() {
            String::new()
        } else {
            format!(" → {}", phase.produces.join(", "))
        };
        let _ = writeln!(
            s,
            "{}. **{}** — {}{produces}",
            i + 1,
            phase.name,
            phase.goal
        );
    }
    let _ = writeln!(s, "\n## Retrieval hints\n");
    for hint in &case.procedure.retrieval_hints {
        let _ = writeln!(s, "- {hint}");
    }
    if !case.context.search_terms.is_empty() {
        let _ = writeln!(
            s,
            "- Search terms: {}",
            case.context
                .search_terms
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// The rail commands to run, and the case's own tool limits.
fn render_rails(s: &mut String, case: &CaseDoc) {
    let _ = writeln!(
        s,
        "\n## Rails\n\nRun these from this directory (`.` is this run). Each prints the id it created, or JSON with `--json`.\n"
    );
    let _ = writeln!(s, "```sh");
    let _ = writeln!(
        s,
        "anvil-bench case add-evidence . --path <repo-relative path> --start-line <N> --end-line <M>"
    );
    let _ = writeln!(
        s,
        "anvil-bench case add-claim . --predicate <predicate> --value '<JSON value>' --artifact <ev-id> --confidence <0..1>"
    );
    let _ = writeln!(s, "anvil-bench case freeze-research .");
    let _ = writeln!(
        s,
        "# write output/proposal.json (schema: {})",
        case.expected_output.proposal_schema
    );
    let _ = writeln!(s, "anvil-bench case validate .");
    let _ = writeln!(
        s,
        "anvil-bench case finalize .            # or --status conflicted|insufficient_evidence|supported|blocked_by_missing_source"
    );
    let _ = writeln!(s, "anvil-bench case show .");
    let _ = writeln!(s, "```\n");
    if !case.tool_limits.is_empty() {
        let limits: Vec<String> = case
            .tool_limits
            .iter()
            .map(|(k, v)| format!("`{k}` = {v}"))
            .collect();
        let _ = writeln!(
            s,
            "Investigation tool limits for this case (others are the defaults): {}.\n",
            limits.join(", ")
        );
    }
}

/// The one admissible proposal: its schema and a skeleton, and how to decline.
fn render_expected_output(s: &mut String, case: &CaseDoc) {
    let id = &case.identity;
    let t = &case.target;
    let c = &case.policy.contract;
    let _ = writeln!(s, "## Expected output\n");
    let _ = writeln!(
        s,
        "`output/proposal.json` must validate against `{}` ({} v{}); it is this case's only admissible proposal:\n",
        case.expected_output.proposal_schema,
        case.expected_output.proposal_format,
        case.expected_output.proposal_format_version
    );
    let field = c.outputs.first().map_or("value", |o| o.field.as_str());
    let skeleton = serde_json::json!({
        "format": case.expected_output.proposal_format,
        "formatVersion": case.expected_output.proposal_format_version,
        "skill": id.skill,
        "skillVersion": id.skill_version,
        "deficiency": case.task.deficiency,
        "target": t.key,
        "patch": {"target": t.key, "set": {field: "<value>"}},
        "grounding": {field: ["cl-<claim id>"]},
        "confidence": 0.9,
        "rationale": "<why the cited claims establish the value>"
    });
    let _ = writeln!(
        s,
        "```json\n{}\n```\n",
        serde_json::to_string_pretty(&skeleton).unwrap_or_default()
    );
    let _ = writeln!(
        s,
        "Declining is a first-class outcome: finalize with `conflicted`, `insufficient_evidence`, `supported` or `blocked_by_missing_source` when that is the truth. Outputs: {}.\n",
        case.expected_output.files.join(", ")
    );
}
