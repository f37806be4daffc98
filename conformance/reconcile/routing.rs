//! What routes a valid proposal to review (R-REC-4): only the claims that ground the patched
//! value count, not every accepted claim of the run.

use anvil_bench::case::open;
use anvil_bench::driver::scripted::{Agent, ScriptedAgentDriver};
use libtest_mimic::Failed;
use serde_json::json;

use super::{close_plain, f, routed_to_review};
use crate::Check;
use crate::support::World;

pub fn checks() -> Vec<Check> {
    vec![Check {
        name: "reconcile::a_verified_claim_that_grounds_nothing_does_not_lift_unverified_grounding",
        rules: &["R-REC-4"],
        run: ungrounding_verified_claim,
    }]
}

fn ungrounding_verified_claim() -> Result<(), Failed> {
    let w = World::new();
    let opened = open(&w.request("describe-operation", "op.get_payment")).map_err(f)?;
    let value = json!("Returns one payment by its identifier.");
    ScriptedAgentDriver::new("external", |agent: &Agent| {
        let mut ids = Vec::new();
        for i in 0..3 {
            ids.push(agent.add_external(
                "vendor-wiki",
                &format!("https://wiki.example.invalid/p/{i}"),
                "GET /payments/{id} returns one payment",
            )?);
        }
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let external = agent.add_claim("operation.description", value.clone(), &refs, 0.6)?;
        // An accepted claim on verified repository lines, which the proposal does not cite.
        let doc = agent.add_evidence("docs/payments.md", Some((6, 6)))?;
        agent.add_claim("operation.description", value.clone(), &[&doc], 0.6)?;
        let research = agent.freeze_research()?;
        assert!(
            research
                .claims
                .iter()
                .all(|c| c.status == anvil_bench::case::research::ClaimStatus::Accepted),
            "fixture: both claims must be accepted: {research:?}"
        );
        agent.propose(value.clone(), &[&external], "three external pages")?;
        agent.validate()?;
        agent.finalize(None, None)?;
        Ok(())
    })
    .run(
        &anvil_bench::case::RunHandle::open(&opened.run_dir)
            .map_err(|e| Failed::from(e.to_string()))?,
    )
    .map_err(f)?;
    let doc = close_plain(&opened.run_dir)?;
    routed_to_review(
        &doc,
        "unverified-only grounding",
        "grounded only by unverified",
    )
}
