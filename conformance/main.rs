//! The protocol conformance suite: scripted, deterministic, no LLM.
//!
//! Every trial names the rule ids it proves (shown as its `[kind]`); `catalogue.rs` holds
//! the rules in this project's words, and `traceability::every_catalogued_rule_has_a_trial`
//! fails while any catalogued rule has none, or while the catalogue and the shared
//! `RULES.md` list different `R-` ids (see `traceability.rs`).
//! `cargo test --test conformance -- --matrix` prints rule → trials, uncovered rules last.

mod agents;
mod attacks;
mod battery;
mod binding;
mod catalogue;
mod claims;
mod containment;
mod corpus;
mod document;
mod drivers;
mod durability;
mod evidence;
mod gate;
mod hostile;
mod identity;
mod lifecycle;
mod open_refusals;
mod parsing;
mod provenance;
mod rails;
mod reconcile;
mod runs;
mod schema;
mod support;
mod tools;
mod traceability;
mod validation;

use std::process::ExitCode;

use libtest_mimic::{Arguments, Failed};

/// One conformance trial: a name `area::behaviour`, the rules it proves, and its body.
pub struct Check {
    pub name: &'static str,
    pub rules: &'static [&'static str],
    pub run: fn() -> Result<(), Failed>,
}

fn discover() -> Vec<Check> {
    let mut all: Vec<Check> = Vec::new();
    all.extend(agents::checks());
    all.extend(identity::checks());
    all.extend(runs::checks());
    all.extend(durability::checks());
    all.extend(document::checks());
    all.extend(evidence::checks());
    all.extend(binding::checks());
    all.extend(claims::checks());
    all.extend(lifecycle::checks());
    all.extend(parsing::checks());
    all.extend(rails::checks());
    all.extend(validation::checks());
    all.extend(drivers::checks());
    all.extend(containment::checks());
    all.extend(schema::checks());
    all.extend(open_refusals::checks());
    all.extend(reconcile::checks());
    all.extend(gate::checks());
    all.extend(corpus::checks());
    all.extend(tools::checks());
    all.extend(hostile::checks());
    all.extend(provenance::checks());
    all.extend(attacks::checks());
    all.extend(battery::checks());
    all.sort_by_key(|c| c.name);
    // A typo in discovery must never turn the suite green.
    assert!(!all.is_empty(), "conformance discovery found zero trials");
    all
}

fn print_matrix(checks: &[Check]) {
    let mut uncovered = Vec::new();
    for (id, text) in catalogue::RULES {
        let trials: Vec<&str> = checks
            .iter()
            .filter(|c| c.rules.contains(id))
            .map(|c| c.name)
            .collect();
        if trials.is_empty() {
            uncovered.push((id, text));
            continue;
        }
        println!("{id}  {text}");
        for t in trials {
            println!("    {t}");
        }
    }
    for (id, text) in &uncovered {
        println!("{id}  {text}\n    (no trial)");
    }
    println!(
        "\n{} rules, {} covered, {} uncovered, {} trials",
        catalogue::RULES.len(),
        catalogue::RULES.len() - uncovered.len(),
        uncovered.len(),
        checks.len()
    );
}

/// `ANVIL_FAIL_FAST=1`: the first failing trial ends the whole run with exit code 101,
/// as `cargo test` does for a failing binary. For mutation testing, where one failure
/// is the whole answer and the rest of the suite is time spent for nothing; never set in CI,
/// where every failure should be reported.
fn stop_at_failure(name: &str, run: fn() -> Result<(), Failed>) -> Result<(), Failed> {
    let outcome = std::panic::catch_unwind(run);
    let message = match &outcome {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(failed)) => failed.message().unwrap_or("failed").to_owned(),
        Err(panic) => panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "panicked".to_owned()),
    };
    eprintln!("\nANVIL_FAIL_FAST: {name} failed, stopping the suite:\n{message}");
    std::process::exit(101);
}

/// The trials' scratch directories go to tmpfs (`/dev/shm`) when the machine has one and
/// `TMPDIR` is not set. The rails fsync at every commit point, about 17,000 fsyncs in one
/// run of the suite, which on this project's disks are ~12 s of its wall time and on tmpfs
/// cost nothing. The code paths are the same (every fsync is still called); what no trial
/// can observe either way is a power failure. Set `TMPDIR` to keep the scratch on a disk.
fn scratch_on_tmpfs() {
    let shm = std::path::Path::new("/dev/shm");
    if std::env::var_os("TMPDIR").is_some() || tempfile::tempdir_in(shm).is_err() {
        return;
    }
    // SAFETY: the first statement of `main`, before any other thread exists.
    unsafe { std::env::set_var("TMPDIR", shm) };
}

fn main() -> ExitCode {
    scratch_on_tmpfs();
    let checks = discover();
    let mut raw: Vec<String> = std::env::args().collect();
    if let Some(pos) = raw.iter().position(|a| a == "--matrix") {
        raw.remove(pos);
        print_matrix(&checks);
        return ExitCode::SUCCESS;
    }
    let args = Arguments::from_iter(raw);
    let trace = traceability::check(&checks);
    let fail_fast = std::env::var_os("ANVIL_FAIL_FAST").is_some_and(|v| !v.is_empty());
    let mut trials: Vec<libtest_mimic::Trial> = checks
        .iter()
        .map(|c| {
            let (name, run) = (c.name, c.run);
            let trial = if fail_fast {
                libtest_mimic::Trial::test(name, move || stop_at_failure(name, run))
            } else {
                libtest_mimic::Trial::test(name, run)
            };
            trial.with_kind(c.rules.join(","))
        })
        .collect();
    trials.push(
        libtest_mimic::Trial::test(
            "traceability::every_catalogued_rule_has_a_trial",
            move || trace,
        )
        .with_kind("catalogue"),
    );
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    libtest_mimic::run(&args, trials).exit_code()
}
