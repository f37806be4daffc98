//! `case …` subcommands.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::case::RunHandle;
use crate::case::{OpenMode, OpenRequest, open};
use crate::cli::exit;

#[derive(Debug, Subcommand)]
pub enum CaseCommand {
    /// Open a case: create a new immutable run for one deficiency of one target.
    ///
    /// Every input is checked before anything is written; a refusal leaves the cases
    /// directory as it was. The default is always a new run: name a run with --resume to
    /// continue it, or with --replace to supersede it (the old run is kept untouched).
    Open(OpenArgs),
    /// Regenerate a run's views and report drift; report the run stale when its identity
    /// no longer matches the AIR, repository, skill version or policy.
    Verify(VerifyArgs),
    /// Point the engine at a repository region; it reads, classifies, hashes and freezes
    /// it as an evidence artifact and prints the artifact id.
    AddEvidence(super::rails_cmd::AddEvidenceArgs),
    /// Record a caller-supplied external excerpt (always unverified); prints its id.
    AddExternalEvidence(super::rails_cmd::AddExternalArgs),
    /// State an atomic claim over existing artifacts; prints the claim id.
    AddClaim(super::rails_cmd::AddClaimArgs),
    /// Freeze evidence.json and claims.json and run the stage-1 checks.
    FreezeResearch(super::rails_cmd::Common),
    /// Freeze output/proposal.json and run the skill's checks; exit 1 on a failing verdict.
    Validate(super::rails_cmd::ValidateArgs),
    /// Write output/result.json with one honest status.
    Finalize(super::rails_cmd::FinalizeArgs),
    /// Re-verify, re-validate, measure the eval delta and reconcile into auto, review or
    /// reject; with --apply, write the patched AIR with provenance.
    Close(super::rails_cmd::CloseArgs),
    /// Run an agent on the run: contained by the backend, streamed to execution.json, with
    /// usage, attestation and the repository's state before and after.
    Investigate(super::investigate_cmd::InvestigateArgs),
    /// Lifecycle state, stage hashes, status, staleness and the next legal rail.
    Show(super::rails_cmd::ShowArgs),
    /// Run a read-only investigation batch (anvil-investigation-request v1) over the
    /// inspect scopes; journaled. --schema prints the request and result schemas.
    Query(super::query_cmd::QueryArgs),
}

#[derive(Debug, Args)]
pub struct OpenArgs {
    /// The AIR document (.json, .yaml or .yml).
    #[arg(long, value_name = "FILE")]
    pub air: PathBuf,
    /// The repository the agent will investigate (read-only).
    #[arg(long, value_name = "DIR")]
    pub repo: PathBuf,
    /// The skill to apply (see `anvil-bench skills`).
    #[arg(long, value_name = "NAME")]
    pub skill: String,
    /// The target key, e.g. op.get_user.input.body.email.
    #[arg(long, value_name = "KEY")]
    pub target: String,
    /// Which detected deficiency to close, when the skill has several on the target.
    #[arg(long, value_name = "CODE")]
    pub deficiency: Option<String>,
    /// Where runs live.
    #[arg(long, value_name = "DIR", default_value = ".refinement/cases")]
    pub cases_dir: PathBuf,
    /// Who will produce the outputs (recorded in the run identity).
    #[arg(long, value_name = "NAME", default_value = "manual")]
    pub executor: String,
    /// An inspect scope GLOB=KIND (kind: implementation, contract_test, schema, doc).
    /// Repeatable; when given, replaces the default scopes. First match wins.
    #[arg(long = "scope", value_name = "GLOB=KIND")]
    pub scopes: Vec<String>,
    /// Override a limit of the investigation tools for this case, NAME=VALUE (e.g.
    /// matchesPerQuery=500); repeatable. Names: requestBytes, batchRequests, selectedFiles,
    /// fileBytes, selectedBytes, databaseRows, matchesPerQuery, contextLines, lineChars,
    /// resultBytes.
    #[arg(long = "tool-limit", value_name = "NAME=VALUE")]
    pub tool_limits: Vec<String>,
    /// A JSON table snapshot (repository-relative) the database tools may read; repeatable.
    /// Default: every `*.snapshot.json` inside the inspect scopes.
    #[arg(long = "snapshot", value_name = "PATH")]
    pub snapshots: Vec<String>,
    /// Continue this existing run instead of opening a new one (nothing is written).
    #[arg(long, value_name = "RUN", conflicts_with = "replace")]
    pub resume: Option<PathBuf>,
    /// Open a new run that supersedes this one; the old run is kept.
    #[arg(long, value_name = "RUN")]
    pub replace: Option<PathBuf>,
    /// Print a JSON object instead of the run path.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The run directory.
    pub run: PathBuf,
    /// The AIR to compare against (default: the one the run was opened from).
    #[arg(long, value_name = "FILE")]
    pub air: Option<PathBuf>,
    /// The repository to compare against (default: the one the run was opened on).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: CaseCommand) -> u8 {
    match cmd {
        CaseCommand::Open(args) => open_cmd(args),
        CaseCommand::Verify(args) => verify_cmd(&args),
        CaseCommand::AddEvidence(a) => super::rails_cmd::add_evidence(a),
        CaseCommand::AddExternalEvidence(a) => super::rails_cmd::add_external(&a),
        CaseCommand::AddClaim(a) => super::rails_cmd::add_claim(a),
        CaseCommand::FreezeResearch(a) => super::rails_cmd::freeze_research(&a),
        CaseCommand::Validate(a) => super::rails_cmd::validate(&a),
        CaseCommand::Finalize(a) => super::rails_cmd::finalize_cmd(&a),
        CaseCommand::Show(a) => super::rails_cmd::show(&a),
        CaseCommand::Query(a) => super::query_cmd::run(a),
        CaseCommand::Close(a) => super::rails_cmd::close(a),
        CaseCommand::Investigate(a) => super::investigate_cmd::run(&a),
    }
}

fn open_cmd(args: OpenArgs) -> u8 {
    let mode = match (args.resume, args.replace) {
        (Some(run), _) => OpenMode::Resume(run),
        (None, Some(run)) => OpenMode::Replace(run),
        (None, None) => OpenMode::New,
    };
    let req = OpenRequest {
        air: args.air,
        repo: args.repo,
        skill: args.skill,
        target: args.target,
        deficiency: args.deficiency,
        cases_dir: args.cases_dir,
        executor: args.executor,
        scopes: args.scopes,
        mode,
        tool_limits: args.tool_limits,
        snapshots: args.snapshots,
    };
    match open(&req) {
        Ok(opened) if args.json => {
            super::print_json(&opened);
            exit::OK
        }
        Ok(opened) => {
            println!("{}", opened.run_dir.display());
            exit::OK
        }
        Err(e) => super::fail(&e, args.json),
    }
}

fn verify_cmd(args: &VerifyArgs) -> u8 {
    let report = match RunHandle::open(&args.run)
        .and_then(|run| run.verify(args.air.as_deref(), args.repo.as_deref()))
    {
        Ok(r) => r,
        Err(e) => return super::fail(&e, args.json),
    };
    if args.json {
        super::print_json(&report);
    } else {
        println!("run {} of case {}", report.run_id, report.case_key);
        if report.drift.is_empty() {
            println!("views: in sync with case.json");
        }
        for d in &report.drift {
            println!("drift: {} {}", d.file, d.reason);
        }
        if report.stale.is_empty() {
            println!("identity: current");
        }
        for s in &report.stale {
            println!("stale: {s}");
        }
        if report.tamper.is_empty() {
            println!("seal: intact");
        }
        for t in &report.tamper {
            println!("tamper: {} ({}) {}", t.file, t.field, t.reason);
        }
    }
    if report.is_clean() {
        exit::OK
    } else {
        exit::REJECTED
    }
}
