//! `air import`, `air export`, and the per-operation summary `detect --spec` prints.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde::Serialize;

use crate::air::openapi::{
    self, Document, Imported, Note, OpenApiError, OperationSummary, summarize,
};
use crate::air::{Air, Deficiency, detect};
use crate::cli::exit;

#[derive(Debug, Subcommand)]
pub enum AirCommand {
    /// Import an OpenAPI 3.0/3.1 or Swagger 2.0 description (YAML or JSON) into AIR.
    ///
    /// Operations are keyed by operationId (or method and path); parameters, request
    /// bodies and success responses become fields (nested names dotted, array items
    /// `name[]`, alternatives `name.oneOf[i]`); 4xx/5xx responses become errors. Units,
    /// sensitivity and retryability are read only from the x-anvil-unit,
    /// x-anvil-sensitivity and x-anvil-retryable extensions. Every element records the
    /// JSON Pointer it came from.
    Import(ImportArgs),
    /// Write a refined AIR's values back into the original description, changing nothing
    /// else: descriptions in place, units, sensitivity and retryability as x-anvil-*
    /// extensions, each application's case and run under x-anvil-provenance.
    Export(ExportArgs),
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The OpenAPI or Swagger description (.yaml, .yml or .json).
    #[arg(value_name = "SPEC")]
    pub spec: PathBuf,
    /// Write the AIR here (default: print it on stdout).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print a versioned JSON report (with the AIR inline when there is no --out).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The original description the AIR was imported from.
    #[arg(long, value_name = "SPEC")]
    pub spec: PathBuf,
    /// The refined AIR (after `case close --apply`).
    #[arg(long, value_name = "REFINED")]
    pub air: PathBuf,
    /// Write the refined description here (default: print it on stdout).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print a versioned JSON report of the edits (needs --out).
    #[arg(long, requires = "out")]
    pub json: bool,
}

pub fn run(cmd: AirCommand) -> u8 {
    match cmd {
        AirCommand::Import(args) => import(&args),
        AirCommand::Export(args) => export(&args),
    }
}

/// Prints an error (and with `--json` an error document) and returns its exit code.
fn fail(err: &OpenApiError, json: bool) -> u8 {
    eprintln!("error: {err}");
    if json {
        super::print_json(&serde_json::json!({
            "error": {
                "kind": err.kind(),
                "message": err.to_string(),
                "pointer": err.pointer(),
                "exitCode": exit::REJECTED,
            }
        }));
    }
    exit::REJECTED
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ImportReport<'a> {
    format: &'static str,
    format_version: u32,
    spec: String,
    version: &'static str,
    air_hash: String,
    operations: usize,
    fields: usize,
    errors: usize,
    notes: &'a [Note],
    #[serde(skip_serializing_if = "Option::is_none")]
    out: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    air: Option<&'a Air>,
}

fn counts(air: &Air) -> (usize, usize, usize) {
    let fields = air.operations.iter().map(|o| o.fields.len()).sum();
    let errors = air.operations.iter().map(|o| o.errors.len()).sum();
    (air.operations.len(), fields, errors)
}

fn print_notes(notes: &[Note]) {
    for line in grouped_notes(notes) {
        eprintln!("note: {line}");
    }
}

/// Notes with the same message on one line: the message, the first pointer, and how many
/// more places it applies to.
fn grouped_notes(notes: &[Note]) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for n in notes {
        match groups.iter_mut().find(|g| g.0 == n.message) {
            Some(g) => g.1.push(&n.pointer),
            None => groups.push((&n.message, vec![&n.pointer])),
        }
    }
    groups
        .into_iter()
        .map(|(message, pointers)| {
            let more = match pointers.len() - 1 {
                0 => String::new(),
                n => format!(" (+{n} more like it)"),
            };
            format!("{}: {message}{more}", openapi::pointer::show(pointers[0]))
        })
        .collect()
}

/// Writes an `--out` file through `write` once [`crate::outpath`] allows the destination:
/// never one of the command's `inputs`.
fn write_out(
    out: &Path,
    inputs: &[&Path],
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    crate::outpath::check_file(out)
        .and_then(|()| crate::outpath::check_not_input(out, inputs))
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    write(out)
}

fn import(args: &ImportArgs) -> u8 {
    let (_, imported) = match openapi::import_file(&args.spec) {
        Ok(r) => r,
        Err(e) => return fail(&e, args.json),
    };
    let air = &imported.air;
    if let Some(out) = &args.out
        && let Err(source) = write_out(out, &[&args.spec], |p| {
            crate::fsio::write_json_atomic(p, air)
        })
    {
        let e = OpenApiError::Write {
            file: out.display().to_string(),
            source,
        };
        return fail(&e, args.json);
    }
    let (operations, fields, errors) = counts(air);
    if args.json {
        super::print_json(&ImportReport {
            format: "anvil-air-import",
            format_version: 1,
            spec: args.spec.display().to_string(),
            version: imported.version.as_str(),
            air_hash: air.hash(),
            operations,
            fields,
            errors,
            notes: &imported.notes,
            out: args.out.as_ref().map(|p| p.display().to_string()),
            air: args.out.is_none().then_some(air),
        });
        return exit::OK;
    }
    print_notes(&imported.notes);
    match &args.out {
        Some(out) => println!(
            "imported {operations} operations, {fields} fields, {errors} errors from {} ({}) into {}",
            args.spec.display(),
            imported.version.as_str(),
            out.display()
        ),
        None => super::print_json(air),
    }
    exit::OK
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExportReport<'a> {
    format: &'static str,
    format_version: u32,
    spec: String,
    out: String,
    #[serde(flatten)]
    exported: &'a openapi::Exported,
}

fn export(args: &ExportArgs) -> u8 {
    let result = Document::load(&args.spec).and_then(|doc| {
        let refined = Air::load(&args.air).map_err(OpenApiError::RefinedAir)?;
        openapi::export(&doc, &refined)
    });
    let exported = match result {
        Ok(x) => x,
        Err(e) => return fail(&e, args.json),
    };
    match &args.out {
        Some(out) => {
            if let Err(source) = write_out(out, &[&args.spec, &args.air], |p| {
                crate::fsio::write_atomic(p, exported.text.as_bytes())
            }) {
                let e = OpenApiError::Write {
                    file: out.display().to_string(),
                    source,
                };
                return fail(&e, args.json);
            }
        }
        None => print!("{}", exported.text),
    }
    if args.json {
        super::print_json(&ExportReport {
            format: "anvil-air-export",
            format_version: 1,
            spec: args.spec.display().to_string(),
            out: args
                .out
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            exported: &exported,
        });
        return exit::OK;
    }
    for e in &exported.edits {
        let verb = match e.action {
            openapi::EditAction::Replace => "replaced",
            openapi::EditAction::Insert => "added",
        };
        eprintln!(
            "{verb} {} at {} ({})",
            e.key,
            openapi::pointer::show(&e.pointer),
            e.target
        );
        if !e.also_affects.is_empty() {
            eprintln!("  the node is shared: also {}", e.also_affects.join(", "));
        }
    }
    eprintln!(
        "{} refined values, {} provenance records{}",
        exported.edits.len(),
        exported.provenance,
        args.out
            .as_ref()
            .map(|p| format!(" written to {}", p.display()))
            .unwrap_or_default()
    );
    exit::OK
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SpecPlan<'a> {
    format: &'static str,
    format_version: u32,
    air_hash: String,
    deficiencies: &'a [Deficiency],
    operations: &'a [OperationSummary],
    notes: &'a [Note],
}

/// `detect --spec`: import, detect, and print the per-operation summary.
pub(crate) fn detect_spec(spec: &Path, json: bool) -> u8 {
    let (_, imported) = match openapi::import_file(spec) {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    let plan = detect(&imported.air);
    let operations = summarize(&imported.air, &plan);
    if json {
        super::print_json(&SpecPlan {
            format: "anvil-plan",
            format_version: 1,
            air_hash: imported.air.hash(),
            deficiencies: &plan,
            operations: &operations,
            notes: &imported.notes,
        });
    } else {
        print!("{}", render_summary(spec, &imported, &plan, &operations));
    }
    exit::OK
}

/// Targets listed per skill before the rest are counted.
const SHOWN_TARGETS: usize = 4;

/// The terminal summary: one block per operation, deficiencies by skill, then totals.
pub(crate) fn render_summary(
    spec: &Path,
    imported: &Imported,
    plan: &[Deficiency],
    operations: &[OperationSummary],
) -> String {
    let air = &imported.air;
    let (ops, fields, errors) = counts(air);
    let mut out = String::new();
    let name = spec.file_name().map_or_else(
        || spec.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let _ = writeln!(
        out,
        "{name}: {} {} ({}), {ops} operations, {fields} fields, {errors} errors\n",
        air.service.id,
        air.service.version,
        imported.version.as_str()
    );
    let width = operations
        .iter()
        .map(|o| o.method.len() + o.path.len() + 1)
        .max()
        .unwrap_or(0);
    let id_width = operations.iter().map(|o| o.id.len()).max().unwrap_or(0);
    for op in operations {
        let route = format!("{} {}", op.method, op.path);
        let status = match op.total {
            0 => "ok".to_string(),
            1 => "1 deficiency".to_string(),
            n => format!("{n} deficiencies"),
        };
        let _ = writeln!(out, "{route:<width$}  {:<id_width$}  {status}", op.id);
        for s in &op.skills {
            let mut targets: Vec<&str> = s
                .targets
                .iter()
                .take(SHOWN_TARGETS)
                .map(String::as_str)
                .collect();
            let more = s.targets.len().saturating_sub(SHOWN_TARGETS);
            let more = if more > 0 {
                format!(" +{more} more")
            } else {
                String::new()
            };
            if targets.is_empty() {
                targets.push("-");
            }
            let _ = writeln!(
                out,
                "    {:<21}{:>3}  {}{more}",
                s.skill,
                s.count,
                targets.join(", ")
            );
        }
    }
    let with = operations.iter().filter(|o| o.total > 0).count();
    let _ = writeln!(
        out,
        "\n{} deficiencies in {with} of {ops} operations",
        plan.len()
    );
    let mut by_skill: Vec<(String, usize)> = Vec::new();
    for d in plan {
        match by_skill.iter_mut().find(|(s, _)| *s == d.skill) {
            Some((_, n)) => *n += 1,
            None => by_skill.push((d.skill.to_string(), 1)),
        }
    }
    by_skill.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (skill, n) in by_skill {
        let _ = writeln!(out, "    {skill:<21}{n:>3}");
    }
    if !imported.notes.is_empty() {
        let _ = writeln!(out, "\nnot imported:");
        for line in grouped_notes(&imported.notes) {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}
