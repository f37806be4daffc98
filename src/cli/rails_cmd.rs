//! The rail subcommands of `case`: add-evidence, add-external-evidence, add-claim,
//! freeze-research, validate, finalize, show.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use crate::case::CaseError;
use crate::case::RunHandle;
use crate::case::evidence::EvidenceRequest;
use crate::case::finalize::Status;
use crate::case::handle::ShowReport;
use crate::case::research::ClaimInput;
use crate::case::validate::Verdict;
use crate::cli::exit;
use crate::limits::{self, Limit};

#[derive(Debug, Args)]
pub struct Common {
    /// The run directory (`.` from inside it).
    pub run: PathBuf,
    /// A key that makes the call idempotent: the same key and body replay the saved
    /// outcome; the same key with another body is a conflict (exit 3).
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
    /// Print a JSON object instead of the plain result.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AddEvidenceArgs {
    #[command(flatten)]
    pub common: Common,
    /// Repository-relative path of the source.
    #[arg(long, value_name = "PATH")]
    pub path: String,
    /// First line (1-based, inclusive); with --end-line. Default: the whole file.
    #[arg(long, value_name = "N", requires = "end_line")]
    pub start_line: Option<u32>,
    /// Last line (inclusive).
    #[arg(long, value_name = "M", requires = "start_line")]
    pub end_line: Option<u32>,
}

#[derive(Debug, Args)]
pub struct AddExternalArgs {
    #[command(flatten)]
    pub common: Common,
    /// Where the excerpt comes from (e.g. `vendor-docs`).
    #[arg(long, value_name = "S")]
    pub source: String,
    /// The excerpt's address.
    #[arg(long, value_name = "U")]
    pub uri: String,
    /// A file holding the excerpt text.
    #[arg(long, value_name = "F")]
    pub excerpt_file: PathBuf,
}

#[derive(Debug, Args)]
pub struct AddClaimArgs {
    #[command(flatten)]
    pub common: Common,
    /// One of the skill's output or supporting predicates.
    #[arg(long, value_name = "P")]
    pub predicate: String,
    /// The asserted value as JSON (`"s"`, `true`, `"Amount in cents"`).
    #[arg(long, value_name = "JSON")]
    pub value: String,
    /// An artifact id the claim rests on (repeatable).
    #[arg(long = "artifact", value_name = "ID", required = true)]
    pub artifacts: Vec<String>,
    /// Confidence in [0, 1].
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub confidence: f64,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub common: Common,
    /// Run the checks and print the verdict without freezing or recording anything.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct FinalizeArgs {
    #[command(flatten)]
    pub common: Common,
    /// The honest outcome: proposal_generated, supported, conflicted, insufficient_evidence,
    /// blocked_by_missing_source. Default: proposal_generated after a passing validation.
    #[arg(long, value_name = "S")]
    pub status: Option<String>,
    /// Why (recorded in result.json).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run directory.
    pub run: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

fn done<T: Serialize>(json: bool, value: &T, plain: impl FnOnce(&T)) -> u8 {
    if json {
        super::print_json(value);
    } else {
        plain(value);
    }
    exit::OK
}

pub fn add_evidence(a: AddEvidenceArgs) -> u8 {
    let req = EvidenceRequest {
        path: a.path,
        start_line: a.start_line,
        end_line: a.end_line,
    };
    match RunHandle::open(&a.common.run)
        .and_then(|run| run.add_evidence(&req, a.common.idempotency_key.as_deref()))
    {
        Ok(art) => done(a.common.json, &art, |art| println!("{}", art.id)),
        Err(e) => super::fail(&e, a.common.json),
    }
}

pub fn add_external(a: &AddExternalArgs) -> u8 {
    let excerpt = match read_excerpt(&a.excerpt_file) {
        Ok(t) => t,
        Err(e) => return super::fail(&e, a.common.json),
    };
    match RunHandle::open(&a.common.run).and_then(|run| {
        run.add_external_evidence(
            &a.source,
            &a.uri,
            &excerpt,
            a.common.idempotency_key.as_deref(),
        )
    }) {
        Ok(art) => done(a.common.json, &art, |art| println!("{}", art.id)),
        Err(e) => super::fail(&e, a.common.json),
    }
}

/// The excerpt file: a regular file (never a FIFO or device, which would block or never
/// end) of UTF-8 text under [`Limit::ExcerptBytes`].
fn read_excerpt(file: &Path) -> Result<String, CaseError> {
    let bytes = limits::read_capped(file, Limit::ExcerptBytes).map_err(|e| match e {
        limits::ReadError::Limit(l) => CaseError::Rail {
            rail: "add-external-evidence",
            kind: "too_large",
            reason: format!("--excerpt-file `{}` {l}", file.display()),
        },
        limits::ReadError::Io(source) => CaseError::io("read", file)(source),
    })?;
    String::from_utf8(bytes).map_err(|e| CaseError::Rail {
        rail: "add-external-evidence",
        kind: "not_utf8",
        reason: format!(
            "--excerpt-file `{}` is not UTF-8 text ({})",
            file.display(),
            e.utf8_error()
        ),
    })
}

pub fn add_claim(a: AddClaimArgs) -> u8 {
    let value = match serde_json::from_str(&a.value) {
        Ok(v) => v,
        Err(err) => {
            let e = crate::case::CaseError::Document(crate::case::proposal::DocError::new(
                "add-claim",
                "value",
                crate::case::proposal::DocErrorKind::Syntax,
                format!(
                    "`{}` is not JSON ({err}); quote strings: --value '\"s\"'",
                    a.value
                ),
            ));
            return super::fail(&e, a.common.json);
        }
    };
    let input = ClaimInput {
        predicate: a.predicate,
        value,
        artifact_ids: a.artifacts,
        confidence: a.confidence,
    };
    match RunHandle::open(&a.common.run)
        .and_then(|run| run.add_claim(input, a.common.idempotency_key.as_deref()))
    {
        Ok(claim) => done(a.common.json, &claim, |c| println!("{}", c.id)),
        Err(e) => super::fail(&e, a.common.json),
    }
}

pub fn freeze_research(a: &Common) -> u8 {
    match RunHandle::open(&a.run).and_then(|run| run.freeze_research(a.idempotency_key.as_deref()))
    {
        Ok(record) => done(a.json, &record, |r| {
            let accepted = r
                .claims
                .iter()
                .filter(|c| c.status == crate::case::research::ClaimStatus::Accepted)
                .count();
            println!(
                "research frozen: {accepted} claim(s) accepted, {} rejected, {} conflict(s)",
                r.claims.len() - accepted,
                r.conflicts.len()
            );
            for c in r.claims.iter().filter(|c| !c.reasons.is_empty()) {
                println!("  rejected {}: {}", c.id, c.reasons.join("; "));
            }
            for v in &r.values {
                println!(
                    "  {} = {} (strength {}, verified {})",
                    v.predicate, v.value, v.strength, v.verified_strength
                );
            }
        }),
        Err(e) => super::fail(&e, a.json),
    }
}

pub fn validate(a: &ValidateArgs) -> u8 {
    match RunHandle::open(&a.common.run)
        .and_then(|run| run.validate(a.common.idempotency_key.as_deref(), a.dry_run))
    {
        Ok(record) => {
            done(a.common.json, &record, |r| {
                let verdict = if r.verdict == Verdict::Pass {
                    "pass"
                } else {
                    "fail"
                };
                println!(
                    "verdict: {verdict}{}",
                    if a.dry_run {
                        " (dry run, nothing recorded)"
                    } else {
                        ""
                    }
                );
                for c in &r.checks {
                    println!(
                        "  {} {}: {}",
                        if c.passed { "ok  " } else { "FAIL" },
                        c.id,
                        c.detail
                    );
                }
            });
            if record.verdict == Verdict::Pass {
                exit::OK
            } else {
                exit::REJECTED
            }
        }
        Err(e) => super::fail(&e, a.common.json),
    }
}

pub fn finalize_cmd(a: &FinalizeArgs) -> u8 {
    let status = match a.status.as_deref().map(|s| (s, Status::parse(s))) {
        None => None,
        Some((_, Some(st))) => Some(st),
        Some((raw, None)) => {
            let e = crate::case::CaseError::Rail {
                rail: "finalize",
                kind: "unknown_status",
                reason: format!(
                    "`{raw}` is not a status; use one of {}",
                    Status::ALL
                        .map(super::super::case::finalize::Status::as_str)
                        .join(", ")
                ),
            };
            return super::fail(&e, a.common.json);
        }
    };
    match RunHandle::open(&a.common.run).and_then(|run| {
        run.finalize(
            status,
            a.reason.as_deref(),
            a.common.idempotency_key.as_deref(),
        )
    }) {
        Ok(result) => done(a.common.json, &result, |r| println!("{}", r.status)),
        Err(e) => super::fail(&e, a.common.json),
    }
}

pub fn show(a: &ShowArgs) -> u8 {
    match RunHandle::open(&a.run).and_then(|run| run.show()) {
        // A tampered or stale run is shown, and the exit says it must not be used.
        Ok(report) if report.tampered.is_some() || !report.stale.is_empty() => {
            done(a.json, &report, print_show);
            super::exit::REJECTED
        }
        Ok(report) => done(a.json, &report, print_show),
        Err(e) => super::fail(&e, a.json),
    }
}

fn print_show(r: &ShowReport) {
    {
        println!("run {} of case {}", r.run_id, r.case_key);
        println!("target {} · skill {}", r.target, r.skill);
        println!("state: {}", r.state);
        for (file, hash) in &r.frozen {
            println!("frozen: {file} {hash}");
        }
        if let Some(t) = &r.tampered {
            println!("TAMPERED: {t}");
        }
        for s in &r.stale {
            println!("stale: {s}");
        }
        if let Some(v) = &r.verdict {
            println!("validation: {v}");
        }
        if let Some(s) = &r.status {
            println!("status: {s}");
        }
        println!(
            "next: {}",
            if r.next.is_empty() {
                "nothing (closed)".to_string()
            } else {
                r.next.join(", ")
            }
        );
    }
}

#[derive(Debug, Args)]
pub struct CloseArgs {
    #[command(flatten)]
    pub common: Common,
    /// Write the patched AIR (with a provenance entry) to this file. Only an `auto` result,
    /// or a `review` result with --approved-by, is applied.
    #[arg(long, value_name = "OUT_AIR")]
    pub apply: Option<PathBuf>,
    /// The person approving a `review`-tier result.
    #[arg(long, value_name = "NAME", requires = "apply")]
    pub approved_by: Option<String>,
}

pub fn close(a: CloseArgs) -> u8 {
    // Checked here, before the rail: the apply itself lives in crate::reconcile.
    if let Some(out) = &a.apply
        && let Err(e) = crate::outpath::check_file(out)
    {
        let e = CaseError::Rail {
            rail: "close",
            kind: e.kind(),
            reason: format!("--apply: {e}"),
        };
        return super::fail(&e, a.common.json);
    }
    let req = crate::reconcile::CloseRequest {
        apply: a.apply,
        approved_by: a.approved_by,
    };
    match RunHandle::open(&a.common.run)
        .and_then(|run| run.close(&req, a.common.idempotency_key.as_deref()))
    {
        Ok(doc) => done(a.common.json, &doc, |d| {
            let tier = d.tier.map_or("none", super::super::reconcile::Tier::as_str);
            println!("{} · tier {tier}", d.status);
            for r in &d.reasons {
                println!("  {r}");
            }
            if let Some(e) = &d.escalate {
                println!("  escalate: {e}");
            }
            if let Some(delta) = &d.eval_delta {
                println!(
                    "  target deficiency closed: {}; new deficiencies: {}",
                    delta.target_closed,
                    delta.new_deficiencies.len()
                );
            }
            if let Some(applied) = &d.applied {
                println!("  applied to {}", applied.air);
            }
        }),
        Err(e) => super::fail(&e, a.common.json),
    }
}
