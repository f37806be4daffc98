//! The scripted driver: an in-process agent that runs a closure over the same rails a real
//! agent calls, so a whole investigation runs in a test with no process and no LLM.
//!
//! Invariant: the script gets no privileged path: every step goes through the public rails
//! (or writes a file into output/ exactly as a hand-writing agent would).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::case::evidence::EvidenceRequest;
use crate::case::finalize::{ResultDoc, Status};
use crate::case::lifecycle::now;

use crate::case::research::{ClaimInput, ResearchRecord};
use crate::case::validate::ValidationRecord;
use crate::case::{CaseDoc, CaseError, RunHandle};

/// The handle a script investigates through.
pub struct Agent {
    run: RunHandle,
}

impl Agent {
    /// A script's hands on the open run.
    #[must_use]
    pub fn new(run: RunHandle) -> Agent {
        Agent { run }
    }

    /// The case the script investigates (the run's case.json).
    #[must_use]
    pub fn case(&self) -> &CaseDoc {
        self.run.doc()
    }

    /// The open run.
    #[must_use]
    pub fn run(&self) -> &RunHandle {
        &self.run
    }

    /// The `add-evidence` rail: freezes `path` (the whole file, or the inclusive `lines`) of
    /// the repository as an artifact and returns its id.
    ///
    /// # Errors
    ///
    /// The run is stale (`CaseError::Stale`) or tampered with (`CaseError::Tampered`, `CaseError::Tamper`),
    /// or is not open (`CaseError::Transition`); the coordinate is refused
    /// (`CaseError::Evidence`: outside the repository or the inspect scopes, missing,
    /// binary, not UTF-8, an invalid range…); or `CaseError::Io` writing the run.
    pub fn add_evidence(&self, path: &str, lines: Option<(u32, u32)>) -> Result<String, CaseError> {
        let req = EvidenceRequest {
            path: path.into(),
            start_line: lines.map(|l| l.0),
            end_line: lines.map(|l| l.1),
        };
        Ok(self.run.add_evidence(&req, None)?.id)
    }

    /// The `add-external-evidence` rail: records `excerpt` from `source` at `uri` as an
    /// unverified artifact and returns its id.
    ///
    /// # Errors
    ///
    /// The run is stale (`CaseError::Stale`) or tampered with (`CaseError::Tampered`, `CaseError::Tamper`),
    /// or is not open (`CaseError::Transition`); the excerpt is refused; or `CaseError::Io`
    /// writing the run.
    pub fn add_external(
        &self,
        source: &str,
        uri: &str,
        excerpt: &str,
    ) -> Result<String, CaseError> {
        Ok(self
            .run
            .add_external_evidence(source, uri, excerpt, None)?
            .id)
    }

    /// The `add-claim` rail: asserts `predicate` = `value` over the artifacts with the ids
    /// `artifacts`, and returns the claim's id.
    ///
    /// # Errors
    ///
    /// The run is stale (`CaseError::Stale`) or tampered with (`CaseError::Tampered`, `CaseError::Tamper`),
    /// or is not open (`CaseError::Transition`); the claim is refused
    /// (`CaseError::Document`: a predicate outside the skill's vocabulary, a value it does
    /// not admit, an artifact id that is not recorded, a confidence outside 0 to 1); or
    /// `CaseError::Io` writing the run.
    pub fn add_claim(
        &self,
        predicate: &str,
        value: Value,
        artifacts: &[&str],
        confidence: f64,
    ) -> Result<String, CaseError> {
        let input = ClaimInput {
            predicate: predicate.into(),
            value,
            artifact_ids: artifacts.iter().map(ToString::to_string).collect(),
            confidence,
        };
        Ok(self.run.add_claim(input, None)?.id)
    }

    /// The `freeze-research` rail: freezes evidence.json and claims.json and runs stage 1.
    ///
    /// # Errors
    ///
    /// The run is stale (`CaseError::Stale`) or tampered with (`CaseError::Tampered`, `CaseError::Tamper`),
    /// or is not open (`CaseError::Transition`); an artifact no longer matches the
    /// repository or a document is malformed; or `CaseError::Io` writing the run.
    pub fn freeze_research(&self) -> Result<ResearchRecord, CaseError> {
        self.run.freeze_research(None)
    }

    /// Writes `output/proposal.json` setting the skill's (first) writable field to `value`,
    /// bound to this case, grounded by `claims`.
    ///
    /// # Errors
    ///
    /// Any error of [`Agent::write_output`].
    pub fn propose(&self, value: Value, claims: &[&str], rationale: &str) -> Result<(), CaseError> {
        let field = self
            .case()
            .policy
            .contract
            .writable_fields()
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        let target = self.case().target.key.to_string();
        let doc = json!({
            "format": "anvil-proposal", "formatVersion": 1,
            "skill": self.case().identity.skill, "skillVersion": self.case().identity.skill_version,
            "deficiency": self.case().task.deficiency, "target": target,
            "patch": {"target": target, "set": {&field: value}},
            "grounding": {&field: claims}, "confidence": 0.9, "rationale": rationale,
        });
        self.write_output(
            "proposal.json",
            &serde_json::to_vec_pretty(&doc).unwrap_or_default(),
        )
    }

    /// Writes a file into output/ directly, as an agent without the rails would.
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when `output/<name>` cannot be written (for instance when the run
    /// has no `output/` directory).
    pub fn write_output(&self, name: &str, bytes: &[u8]) -> Result<(), CaseError> {
        let path = self.run.output(name);
        crate::fsio::write_atomic(&path, bytes).map_err(CaseError::io("write", path))
    }

    /// The `validate` rail: freezes the proposal and records the verdict. A proposal that
    /// fails the checks is a record with a failing verdict, not an error.
    ///
    /// # Errors
    ///
    /// The run is stale (`CaseError::Stale`) or tampered with (`CaseError::Tampered`, `CaseError::Tamper`),
    /// or its research is not frozen (`CaseError::Transition`); `output/proposal.json` is
    /// missing (`CaseError::Rail` of kind `missing_output`) or malformed
    /// (`CaseError::Document`); or `CaseError::Io` reading or writing the run.
    pub fn validate(&self) -> Result<ValidationRecord, CaseError> {
        self.run.validate(None, false)
    }

    /// The `finalize` rail: `status` (by default `proposal_generated` after a passing
    /// validation), with `reason`.
    ///
    /// # Errors
    ///
    /// The run is stale (`CaseError::Stale`) or tampered with (`CaseError::Tampered`, `CaseError::Tamper`),
    /// or cannot move to finalized (`CaseError::Transition`); no status is named and no
    /// passing validation is recorded, or `proposal_generated` is named without one
    /// (`CaseError::Rail`); or `CaseError::Io` reading or writing the run.
    pub fn finalize(
        &self,
        status: Option<Status>,
        reason: Option<&str>,
    ) -> Result<ResultDoc, CaseError> {
        self.run.finalize(status, reason, None)
    }
}

/// What a scripted run recorded (written to `execution.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptedExecution {
    pub format: String,
    pub format_version: u32,
    pub driver: String,
    pub started_at: String,
    pub ended_at: String,
    pub error: Option<String>,
}

/// An in-process driver over a script.
pub struct ScriptedAgentDriver<F> {
    pub name: String,
    script: F,
}

impl<F> ScriptedAgentDriver<F>
where
    F: Fn(&Agent) -> Result<(), CaseError>,
{
    pub fn new(name: &str, script: F) -> Self {
        ScriptedAgentDriver {
            name: name.into(),
            script,
        }
    }

    /// Runs the script against the open run and records an execution log. A script error
    /// is recorded and returned.
    ///
    /// # Errors
    ///
    /// `execution.json` cannot be written (`CaseError::Io`), or the script itself fails:
    /// its error is returned after being recorded.
    pub fn run(&self, run: &RunHandle) -> Result<ScriptedExecution, CaseError> {
        let agent = Agent::new(run.clone());
        let started_at = now();
        let outcome = (self.script)(&agent);
        let record = ScriptedExecution {
            format: "anvil-execution".into(),
            format_version: 1,
            driver: format!("scripted:{}", self.name),
            started_at,
            ended_at: now(),
            error: outcome.as_ref().err().map(ToString::to_string),
        };
        let path = run.dir().join("execution.json");
        crate::fsio::write_json_atomic(&path, &record).map_err(CaseError::io("write", path))?;
        outcome.map(|()| record)
    }
}

impl<F> super::agent::AgentDriver for ScriptedAgentDriver<F>
where
    F: Fn(&Agent) -> Result<(), CaseError>,
{
    fn name(&self) -> String {
        format!("scripted:{}", self.name)
    }

    /// Runs the script in-process. The backend does not apply: nothing is spawned, so the
    /// report carries no attestation.
    fn drive(
        &self,
        run: &RunHandle,
        _policy: &super::process_agent::ExecutionPolicy,
        _cancel: &crate::process::CancelHandle,
        _progress: &mut (dyn FnMut(super::investigate::Progress) + Send),
    ) -> Result<super::investigate::InvestigateReport, super::investigate::InvestigateError> {
        let record = self.run(run);
        let lc = run.lifecycle()?;
        let status =
            crate::case::store::read_doc::<Value>(run.dir(), crate::case::store::RESULT_JSON)
                .ok()
                .flatten()
                .and_then(|r| r.get("status").cloned());
        let failure = record.as_ref().err().map(ToString::to_string);
        Ok(super::investigate::InvestigateReport {
            format: "anvil-investigation",
            format_version: 1,
            run: run.dir().display().to_string(),
            driver: super::agent::AgentDriver::name(self),
            backend: "in_process".into(),
            outcome: if failure.is_none() {
                crate::process::Outcome::Completed
            } else {
                crate::process::Outcome::Failed
            },
            failure,
            state: lc.state,
            status,
            usage: super::usage::Usage::default(),
            process_ms: None,
            attestation: None,
            violation: None,
        })
    }
}

/// A script document for `case investigate --driver scripted --script FILE`: rail steps in
/// order. In a list of artifact or claim ids, `@N` stands for the id step N produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScriptDoc {
    pub format: String,
    pub format_version: u32,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Step {
    AddEvidence {
        path: String,
        #[serde(default)]
        start_line: Option<u32>,
        #[serde(default)]
        end_line: Option<u32>,
    },
    AddExternalEvidence {
        source: String,
        uri: String,
        excerpt: String,
    },
    AddClaim {
        predicate: String,
        value: Value,
        artifacts: Vec<String>,
        #[serde(default = "one")]
        confidence: f64,
    },
    FreezeResearch {},
    Propose {
        value: Value,
        claims: Vec<String>,
        rationale: String,
    },
    Validate {},
    Finalize {
        #[serde(default)]
        status: Option<Status>,
        #[serde(default)]
        reason: Option<String>,
    },
}

fn one() -> f64 {
    1.0
}

impl ScriptDoc {
    /// Reads and checks a script file: a regular file of at most
    /// [`Limit::DocBytes`](crate::limits::Limit::DocBytes), strict (unknown fields are
    /// refused with their path).
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when the file cannot be read: missing, not a regular file (a symlink
    /// is not followed), over the cap in force or the cap's override invalid; otherwise any
    /// error of [`ScriptDoc::parse`].
    pub fn load(path: &Path) -> Result<ScriptDoc, CaseError> {
        Ok(ScriptDoc::read(path)?.0)
    }

    /// [`ScriptDoc::load`], also giving the bytes it parsed (for their digest).
    ///
    /// # Errors
    ///
    /// As [`ScriptDoc::load`].
    pub fn read(path: &Path) -> Result<(ScriptDoc, Vec<u8>), CaseError> {
        let bytes = crate::limits::read_capped(path, crate::limits::Limit::DocBytes)
            .map_err(|e| CaseError::io("read", path)(e.into()))?;
        Ok((ScriptDoc::parse(&bytes, path)?, bytes))
    }

    /// Checks the bytes of a script; `path` names it in errors.
    ///
    /// # Errors
    ///
    /// `CaseError::Corrupt` naming `path` and the JSON path of the fault: the bytes are not
    /// JSON, a field is unknown, missing or of the wrong type, or the document is not
    /// `anvil-script` version 1.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<ScriptDoc, CaseError> {
        let corrupt = |e: crate::json_path::PathError| CaseError::Corrupt {
            file: path.to_path_buf(),
            field: e.path,
            reason: e.message,
        };
        let value = crate::json_path::parse_slice(bytes).map_err(corrupt)?;
        let doc: ScriptDoc = crate::json_path::deserialize(value).map_err(corrupt)?;
        if doc.format != "anvil-script" || doc.format_version != 1 {
            return Err(CaseError::Corrupt {
                file: path.to_path_buf(),
                field: "formatVersion".into(),
                reason: format!(
                    "expected anvil-script v1, found {} v{}",
                    doc.format, doc.format_version
                ),
            });
        }
        Ok(doc)
    }

    /// Runs the steps through `agent`, resolving `@N` references.
    ///
    /// # Errors
    ///
    /// The first step that fails stops the script with that rail's error; an `@N` that
    /// names no earlier step that produced an id is `CaseError::Rail` of kind
    /// `bad_reference`.
    pub fn play(&self, agent: &Agent) -> Result<(), CaseError> {
        let mut produced: Vec<Option<String>> = Vec::new();
        let resolve = |ids: &[String],
                       produced: &[Option<String>]|
         -> Result<Vec<String>, CaseError> {
            ids.iter()
                .map(|id| match id.strip_prefix('@').map(str::parse::<usize>) {
                    Some(Ok(n)) => {
                        produced
                            .get(n)
                            .cloned()
                            .flatten()
                            .ok_or_else(|| CaseError::Rail {
                                rail: "script",
                                kind: "bad_reference",
                                reason: format!("`{id}` names no earlier step that produced an id"),
                            })
                    }
                    _ => Ok(id.clone()),
                })
                .collect()
        };
        for step in &self.steps {
            let id = match step {
                Step::AddEvidence {
                    path,
                    start_line,
                    end_line,
                } => {
                    let lines = start_line.zip(*end_line);
                    Some(agent.add_evidence(path, lines)?)
                }
                Step::AddExternalEvidence {
                    source,
                    uri,
                    excerpt,
                } => Some(agent.add_external(source, uri, excerpt)?),
                Step::AddClaim {
                    predicate,
                    value,
                    artifacts,
                    confidence,
                } => {
                    let ids = resolve(artifacts, &produced)?;
                    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                    Some(agent.add_claim(predicate, value.clone(), &refs, *confidence)?)
                }
                Step::FreezeResearch {} => {
                    agent.freeze_research()?;
                    None
                }
                Step::Propose {
                    value,
                    claims,
                    rationale,
                } => {
                    let ids = resolve(claims, &produced)?;
                    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                    agent.propose(value.clone(), &refs, rationale)?;
                    None
                }
                Step::Validate {} => {
                    agent.validate()?;
                    None
                }
                Step::Finalize { status, reason } => {
                    agent.finalize(*status, reason.as_deref())?;
                    None
                }
            };
            produced.push(id);
        }
        Ok(())
    }
}
