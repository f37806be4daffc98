//! `anvil-bench demo`: scripted cases end to end on the bundled payments example.
//!
//! The example is embedded in the binary, so the demo runs from any directory on a fresh
//! machine. Each case is opened on the current AIR, investigated by a scripted agent with
//! pre-seeded evidence through the public rails, finalized and closed; `auto` results are
//! applied, each producing the next AIR.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use crate::case::{CaseError, OpenMode, OpenRequest, RunHandle, open};
use crate::driver::scripted::{Agent, ScriptedAgentDriver};
use crate::reconcile::{CloseRequest, Tier};

/// The bundled example: (path relative to the example root, contents).
pub const EXAMPLE: &[(&str, &str)] = &[
    ("air.json", include_str!("../examples/payments/air.json")),
    (
        "repo/src/payments/service.py",
        include_str!("../examples/payments/repo/src/payments/service.py"),
    ),
    (
        "repo/src/payments/receipts.py",
        include_str!("../examples/payments/repo/src/payments/receipts.py"),
    ),
    (
        "repo/src/payments/gateway.py",
        include_str!("../examples/payments/repo/src/payments/gateway.py"),
    ),
    (
        "repo/tests/test_capture.py",
        include_str!("../examples/payments/repo/tests/test_capture.py"),
    ),
    (
        "repo/docs/payments.md",
        include_str!("../examples/payments/repo/docs/payments.md"),
    ),
];

/// One scripted investigation: a skill, a target, the evidence to cite, and the value.
struct Scripted {
    skill: &'static str,
    target: &'static str,
    evidence: &'static [(&'static str, u32, u32)],
    predicate: &'static str,
    value: fn() -> Value,
}

const CASES: &[Scripted] = &[
    Scripted {
        skill: "annotate-unit",
        target: "op.create_payment.input.body.capture_timeout",
        evidence: &[
            ("src/payments/service.py", 32, 39),
            ("tests/test_capture.py", 6, 8),
        ],
        predicate: "field.unit",
        value: || json!("s"),
    },
    Scripted {
        skill: "enrich-error",
        target: "op.create_payment.error.CARD_DECLINED",
        evidence: &[("src/payments/service.py", 45, 47)],
        predicate: "error.retryable",
        value: || json!(false),
    },
    Scripted {
        skill: "enrich-error",
        target: "op.create_payment.error.RATE_LIMITED",
        evidence: &[("src/payments/service.py", 48, 50)],
        predicate: "error.retryable",
        value: || json!(true),
    },
    Scripted {
        skill: "classify-sensitivity",
        target: "op.create_payment.input.body.customer_email",
        evidence: &[("src/payments/receipts.py", 13, 15)],
        predicate: "field.sensitivity",
        value: || json!("pii"),
    },
    Scripted {
        skill: "describe-field",
        target: "op.create_payment.output.body.payment_id",
        // The whole of create_payment (the gateway authorisation whose id it returns) and
        // the doc line on GET: the description says only what these lines state.
        evidence: &[
            ("src/payments/service.py", 42, 54),
            ("docs/payments.md", 6, 6),
        ],
        predicate: "field.description",
        value: || {
            json!(
                "The gateway authorisation id that POST /payments returns; GET /payments/{payment_id} returns the payment it created."
            )
        },
    },
    Scripted {
        skill: "describe-operation",
        target: "op.get_payment",
        evidence: &[("docs/payments.md", 6, 6)],
        predicate: "operation.description",
        value: || json!("Returns the payment created by POST /payments."),
    },
];

/// One line of the demo's outcome.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoRow {
    pub target: String,
    pub skill: String,
    pub status: String,
    pub tier: String,
    pub reasons: Vec<String>,
    pub applied_to: Option<String>,
    pub run: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoReport {
    pub format: &'static str,
    pub format_version: u32,
    pub dir: String,
    pub final_air: String,
    pub cases: Vec<DemoRow>,
}

/// Writes the bundled example under `dir`.
///
/// # Errors
///
/// An I/O error writing a file of the example under `dir`.
pub fn write_example(dir: &Path) -> Result<(), CaseError> {
    for (rel, text) in EXAMPLE {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(CaseError::io("create", parent))?;
        }
        std::fs::write(&path, text).map_err(CaseError::io("write", path))?;
    }
    Ok(())
}

/// Runs the demo in `dir` (which must not exist or be empty).
///
/// # Errors
///
/// `dir` is a symlink or not a directory (see [`crate::outpath::check_dir`]), exists and is
/// not empty, or any error of a rail while running a case.
pub fn run(dir: &Path, mut progress: impl FnMut(&DemoRow)) -> Result<DemoReport, CaseError> {
    // A link to a directory (or a device) is refused, not written through.
    crate::outpath::check_dir(dir).map_err(|e| CaseError::Rail {
        rail: "demo",
        kind: e.kind(),
        reason: e.to_string(),
    })?;
    if dir.exists()
        && std::fs::read_dir(dir)
            .map_err(CaseError::io("read", dir))?
            .next()
            .is_some()
    {
        return Err(CaseError::Rail {
            rail: "demo",
            kind: "dir_not_empty",
            reason: format!("`{}` is not empty; name a new directory", dir.display()),
        });
    }
    write_example(dir)?;
    let mut air = dir.join("air.json");
    let mut rows = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let next = dir.join(format!("air.{}.json", i + 1));
        let row = run_case(dir, &air, &next, case)?;
        if row.applied_to.is_some() {
            air = next;
        }
        progress(&row);
        rows.push(row);
    }
    Ok(DemoReport {
        format: "anvil-demo",
        format_version: 1,
        dir: dir.display().to_string(),
        final_air: air.display().to_string(),
        cases: rows,
    })
}

/// Opens, plays and closes one scripted case on `air`, applying to `next` where the tier
/// allows.
fn run_case(dir: &Path, air: &Path, next: &Path, case: &Scripted) -> Result<DemoRow, CaseError> {
    let opened = open(&OpenRequest {
        air: air.to_path_buf(),
        repo: dir.join("repo"),
        skill: case.skill.into(),
        target: case.target.into(),
        deficiency: None,
        cases_dir: dir.join(".refinement/cases"),
        executor: "scripted:demo".into(),
        scopes: vec![],
        mode: OpenMode::New,
        tool_limits: vec![],
        snapshots: vec![],
    })?;
    let driver = ScriptedAgentDriver::new("demo", |agent: &Agent| {
        let ids = case
            .evidence
            .iter()
            .map(|(p, a, b)| agent.add_evidence(p, Some((*a, *b))))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let claim = agent.add_claim(case.predicate, (case.value)(), &refs, 0.9)?;
        agent.freeze_research()?;
        agent.propose(
            (case.value)(),
            &[&claim],
            "scripted demo: the cited sources state it",
        )?;
        agent.validate()?;
        agent.finalize(None, None)?;
        Ok(())
    });
    let run = RunHandle::open(&opened.run_dir)?;
    driver.run(&run)?;
    // Try to apply; a review-tier result is closed without applying.
    let apply = CloseRequest {
        apply: Some(next.to_path_buf()),
        approved_by: None,
    };
    let closed = match run.close(&apply, None) {
        Ok(doc) => doc,
        Err(CaseError::Rail {
            kind: "needs_approval",
            ..
        }) => run.close(&CloseRequest::default(), None)?,
        Err(e) => return Err(e),
    };
    let applied_to = closed.applied.as_ref().map(|a| a.air.clone());
    Ok(DemoRow {
        target: case.target.into(),
        skill: case.skill.into(),
        status: closed.status.to_string(),
        tier: closed.tier.map_or("none", Tier::as_str).into(),
        reasons: closed.reasons.clone(),
        applied_to,
        run: opened.run_dir.display().to_string(),
    })
}

/// A fresh directory for the demo under the system temp dir.
#[must_use]
pub fn default_dir() -> PathBuf {
    std::env::temp_dir().join(format!("anvil-demo-{}", ulid::Ulid::new()))
}
