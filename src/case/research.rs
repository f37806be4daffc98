//! Claims and stage 1: the claims document, claim intake, and the frozen research record.
//!
//! Invariant: a claim's predicate is in the skill's vocabulary, it cites artifacts that
//! exist, and it carries no excerpt. Stage 1 marks failing claims rejected with a reason,
//! never drops them, marks each accepted claim on an output predicate attested or not
//! (R-GATE-1), and records every conflict — between accepted claims, and between verified
//! excerpts whether claimed or not (R-GATE-2); strength never settles a conflict.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::attest::{AttestedConflict, Attester, ClaimAttestation};
use super::claim::RawClaim;
use super::doc::CaseDoc;
use super::evidence::{EvidenceArtifact, EvidenceDoc};
use super::proposal::{DocError, DocErrorKind, is_claim_id};
use crate::skill::SkillPolicy;

pub const CLAIMS_FORMAT: &str = "anvil-claims";
pub const CLAIMS_FORMAT_VERSION: u32 = 1;

/// `output/claims.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimsDoc {
    pub format: String,
    pub format_version: u32,
    pub claims: Vec<RawClaim>,
}

impl ClaimsDoc {
    #[must_use]
    pub fn empty() -> ClaimsDoc {
        ClaimsDoc {
            format: CLAIMS_FORMAT.into(),
            format_version: CLAIMS_FORMAT_VERSION,
            claims: vec![],
        }
    }
}

/// The body of an add-claim request (strict: an `excerpt` or any other field is refused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimInput {
    pub predicate: String,
    pub value: Value,
    pub artifact_ids: Vec<String>,
    #[serde(default = "default_confidence")]
    pub confidence: f64,
}

fn default_confidence() -> f64 {
    1.0
}

/// The id of a claim: derived from its content, so the same claim is never stored twice.
#[must_use]
pub fn claim_id(predicate: &str, value: &Value, artifact_ids: &[String]) -> String {
    let mut ids: Vec<&String> = artifact_ids.iter().collect();
    ids.sort();
    let hash = crate::canon::canonical_hash(&serde_json::json!({
        "predicate": predicate, "value": value, "artifactIds": ids,
    }));
    format!("cl-{}", &hash["sha256:".len().."sha256:".len() + 24])
}

/// The deepest a claim value may nest. The documents that carry it (claims.json, the
/// journal) nest it a few levels further, and the JSON parser stops at 128: a deeper value
/// would be stored where the engine could never read it back.
pub const MAX_CLAIM_VALUE_DEPTH: usize = 32;

/// The largest claim value, serialised. A value is a unit, a description, a vocabulary
/// term — not a document; a huge one would be copied into every record that cites it.
pub const MAX_CLAIM_VALUE_BYTES: usize = 64 << 10;

/// How many arrays and objects deep `value` nests (a scalar is 0), without recursion.
fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        deepest = deepest.max(depth);
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    deepest
}

/// Why `value` is too large to be a claim's value, if it is.
fn oversized(value: &Value) -> Option<String> {
    let depth = nesting(value);
    if depth > MAX_CLAIM_VALUE_DEPTH {
        return Some(format!(
            "value is nested {depth} deep, over the limit of {MAX_CLAIM_VALUE_DEPTH}"
        ));
    }
    let bytes = serde_json::to_string(value).map_or(usize::MAX, |t| t.len());
    (bytes > MAX_CLAIM_VALUE_BYTES)
        .then(|| format!("value is {bytes} bytes, over the limit of {MAX_CLAIM_VALUE_BYTES}"))
}

/// Checks one claim against the case and the evidence. Returns every reason it fails.
#[must_use]
pub fn claim_problems(claim: &RawClaim, case: &CaseDoc, evidence: &EvidenceDoc) -> Vec<String> {
    let contract = &case.policy.contract;
    let mut problems = Vec::new();
    // Named first, and never echoed: a flood is refused by its size, not copied.
    let too_big = oversized(&claim.value);
    problems.extend(too_big.clone());
    if !contract
        .all_predicates()
        .contains(&claim.predicate.as_str())
    {
        problems.push(format!(
            "predicate `{}` is outside the skill's vocabulary ({})",
            claim.predicate,
            contract.all_predicates().join(", ")
        ));
    }
    if !claim.confidence.is_finite() || !(0.0..=1.0).contains(&claim.confidence) {
        problems.push(format!("confidence {} is outside [0, 1]", claim.confidence));
    }
    if claim.artifact_ids.is_empty() {
        problems.push("cites no artifact".into());
    }
    for id in &claim.artifact_ids {
        match evidence.get(id) {
            None => problems.push(format!("artifact `{id}` does not exist")),
            Some(a) if !contract.admissible_kinds.contains(&a.kind) => problems.push(format!(
                "artifact `{id}` is of inadmissible kind {}",
                a.kind
            )),
            Some(_) => {}
        }
    }
    if too_big.is_none()
        && let Some(field) = contract.field_for_predicate(&claim.predicate)
        && let Some(constraint) = contract.value_constraints.get(field)
        && !constraint.admits(&claim.value)
    {
        problems.push(format!(
            "value {} is not admissible for `{field}`: expected {}",
            claim.value,
            constraint.describe()
        ));
    }
    problems
}

/// Validates a claim request into a stored claim (the rail's check; freeze checks again).
///
/// # Errors
///
/// A [`DocError`] for document `add-claim` listing every problem, its kind taken from the
/// first: `boundary` for a predicate outside the skill's vocabulary, `confidence` for a
/// confidence outside [0, 1], `value` for an oversized value or one the predicate's field
/// does not admit, and `grounding` when the claim cites no artifact, a missing one, or one
/// of an inadmissible kind.
pub fn admit_claim(
    input: ClaimInput,
    case: &CaseDoc,
    evidence: &EvidenceDoc,
) -> Result<RawClaim, DocError> {
    let claim = RawClaim {
        id: claim_id(&input.predicate, &input.value, &input.artifact_ids),
        predicate: input.predicate,
        value: input.value,
        artifact_ids: input.artifact_ids,
        confidence: input.confidence,
    };
    let problems = claim_problems(&claim, case, evidence);
    if let Some(first) = problems.first() {
        let field = if first.starts_with("predicate") {
            "predicate"
        } else if first.starts_with("confidence") {
            "confidence"
        } else if first.starts_with("value") {
            "value"
        } else {
            "artifactIds"
        };
        let kind = match field {
            "confidence" => DocErrorKind::Confidence,
            "value" => DocErrorKind::Value,
            "predicate" => DocErrorKind::Boundary,
            _ => DocErrorKind::Grounding,
        };
        return Err(DocError::new("add-claim", field, kind, problems.join("; ")));
    }
    Ok(claim)
}

/// Stage-1 verdict on one claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimVerdict {
    pub id: String,
    pub status: ClaimStatus,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// For an accepted claim on an output predicate: whether its cited lines state its
    /// value (R-GATE-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attestation: Option<ClaimAttestation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    Accepted,
    Rejected,
}

/// The aggregate support for one value of one output predicate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValueSupport {
    pub predicate: String,
    pub value: Value,
    pub claim_ids: Vec<String>,
    pub strength: f64,
    pub verified_strength: f64,
    pub meets_minimum: bool,
}

/// Two or more values asserted by accepted claims on one output predicate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Conflict {
    pub predicate: String,
    pub values: Vec<ValueSupport>,
}

/// The stage-1 record written into lifecycle.json at freeze-research.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResearchRecord {
    pub claims: Vec<ClaimVerdict>,
    pub values: Vec<ValueSupport>,
    pub conflicts: Vec<Conflict>,
    /// Verified excerpts stating different values, claimed or not (R-GATE-2).
    #[serde(default)]
    pub attested_conflicts: Vec<AttestedConflict>,
    pub at: String,
}

impl ResearchRecord {
    #[must_use]
    pub fn accepted(&self, id: &str) -> bool {
        self.claims
            .iter()
            .any(|c| c.id == id && c.status == ClaimStatus::Accepted)
    }

    #[must_use]
    pub fn conflict_on(&self, predicate: &str) -> Option<&Conflict> {
        self.conflicts.iter().find(|c| c.predicate == predicate)
    }

    /// An unclaimed or claimed conflict between verified excerpts on `predicate`.
    #[must_use]
    pub fn attested_conflict_on(&self, predicate: &str) -> Option<&AttestedConflict> {
        self.attested_conflicts
            .iter()
            .find(|c| c.predicate == predicate)
    }
}

/// Noisy-or strength of a set of artifacts: distinct sources count once each (one file, or
/// one external uri, however many excerpts of it are cited; the strongest excerpt counts).
pub fn aggregate_strength<'a>(artifacts: impl IntoIterator<Item = &'a EvidenceArtifact>) -> f64 {
    let mut per_source: BTreeMap<String, f64> = BTreeMap::new();
    for a in artifacts {
        let source = match &a.path {
            Some(path) => format!("file:{path}"),
            None => format!("uri:{}", a.uri),
        };
        let e = per_source.entry(source).or_insert(0.0);
        *e = e.max(a.kind.strength());
    }
    let miss: f64 = per_source.values().map(|s| 1.0 - s).product();
    // Round so that 1 − (1 − 0.9) is 0.9, not 0.9000000000000001.
    ((1.0 - miss) * 1e9).round() / 1e9
}

/// Artifacts cited by the given claims (deduplicated by id).
#[must_use]
pub fn cited<'a>(claims: &[&RawClaim], evidence: &'a EvidenceDoc) -> Vec<&'a EvidenceArtifact> {
    let ids: BTreeSet<&String> = claims.iter().flat_map(|c| c.artifact_ids.iter()).collect();
    ids.into_iter().filter_map(|id| evidence.get(id)).collect()
}

/// Stage 1 over the deposited claims and evidence, stamped `at`.
///
/// A pure function of the case, the evidence and the claims (`at` is only stamped on
/// it), and every later rail re-derives the record freeze-research made (validate,
/// finalize and close each check it): inside one process it is computed once for each
/// inputs, keyed by the digest of their JSON.
#[must_use]
pub fn stage_one(
    case: &CaseDoc,
    evidence: &EvidenceDoc,
    claims: &ClaimsDoc,
    at: &str,
) -> ResearchRecord {
    static RECORDS: crate::memo::Memo<[u8; 32], ResearchRecord> = crate::memo::Memo::new(256);
    let derive = || derive_stage_one(case, evidence, claims);
    let mut record = match crate::canon::json_digest(&(case, evidence, claims)) {
        Some(key) => RECORDS.get_or(key, derive),
        None => derive(),
    };
    record.at = at.to_string();
    record
}

/// [`stage_one`] computed, stamped with no time.
fn derive_stage_one(case: &CaseDoc, evidence: &EvidenceDoc, claims: &ClaimsDoc) -> ResearchRecord {
    let contract = &case.policy.contract;
    let attester = Attester::new(case);
    let mut verdicts = Vec::new();
    let mut accepted: Vec<&RawClaim> = Vec::new();
    let mut seen = BTreeSet::new();
    for claim in &claims.claims {
        let mut reasons = claim_problems(claim, case, evidence);
        if !is_claim_id(&claim.id) {
            reasons.push(format!("`{}` is not a claim id", claim.id));
        } else if claim.id != claim_id(&claim.predicate, &claim.value, &claim.artifact_ids) {
            reasons.push(format!(
                "`{}` does not derive from the claim's content",
                claim.id
            ));
        }
        if !seen.insert(claim.id.clone()) {
            reasons.push(format!("duplicate claim id `{}`", claim.id));
        }
        let (status, attestation) = if reasons.is_empty() {
            accepted.push(claim);
            let a = attester.attest(&claim.predicate, &claim.value, &[claim], evidence);
            (ClaimStatus::Accepted, a)
        } else {
            (ClaimStatus::Rejected, None)
        };
        verdicts.push(ClaimVerdict {
            id: claim.id.clone(),
            status,
            reasons,
            attestation,
        });
    }
    let values = value_support(contract, &accepted, evidence);
    let conflicts = contract
        .output_predicates()
        .into_iter()
        .filter_map(|p| {
            let vs: Vec<ValueSupport> = values
                .iter()
                .filter(|v| v.predicate == p)
                .cloned()
                .collect();
            (vs.len() > 1).then(|| Conflict {
                predicate: p.to_string(),
                values: vs,
            })
        })
        .collect();
    let mut claimed: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for c in &accepted {
        let list = claimed.entry(c.predicate.clone()).or_default();
        if !list.contains(&c.value) {
            list.push(c.value.clone());
        }
    }
    ResearchRecord {
        claims: verdicts,
        values,
        conflicts,
        attested_conflicts: attester.conflicts(evidence, &claimed),
        at: String::new(),
    }
}

/// The support for each distinct value the accepted claims give an output predicate, in
/// the contract's predicate order and then the order the values were first claimed: the
/// claims, their cited artifacts' strength and verified strength, and whether that meets
/// the contract's minimum.
fn value_support(
    contract: &SkillPolicy,
    accepted: &[&RawClaim],
    evidence: &EvidenceDoc,
) -> Vec<ValueSupport> {
    let mut values: Vec<ValueSupport> = Vec::new();
    for predicate in contract.output_predicates() {
        let mut by_value: Vec<(Value, Vec<&RawClaim>)> = Vec::new();
        for claim in accepted.iter().filter(|c| c.predicate == predicate) {
            match by_value.iter_mut().find(|(v, _)| v == &claim.value) {
                Some((_, list)) => list.push(claim),
                None => by_value.push((claim.value.clone(), vec![claim])),
            }
        }
        for (value, list) in by_value {
            let arts = cited(&list, evidence);
            let strength = aggregate_strength(arts.iter().copied());
            let verified_strength =
                aggregate_strength(arts.iter().copied().filter(|a| a.is_verified()));
            values.push(ValueSupport {
                predicate: predicate.to_string(),
                value,
                claim_ids: list.iter().map(|c| c.id.clone()).collect(),
                strength,
                verified_strength,
                meets_minimum: strength >= contract.minimum_strength,
            });
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{MAX_CLAIM_VALUE_BYTES, MAX_CLAIM_VALUE_DEPTH, claim_problems, nesting, oversized};
    use crate::case::claim::RawClaim;
    use crate::case::evidence::EvidenceDoc;
    use crate::case::testing::{cite, claim_unit, payments_run};

    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!("s"), |inner, _| json!([inner]))
    }

    /// A value `build(depth)` deep is admitted at the nesting limit and refused, naming its
    /// depth, one level deeper.
    fn at_the_depth_limit_and_one_over(build: fn(usize) -> Value) {
        assert_eq!(oversized(&build(MAX_CLAIM_VALUE_DEPTH)), None);
        let over = oversized(&build(MAX_CLAIM_VALUE_DEPTH + 1)).expect("refused");
        assert!(
            over.contains(&format!("nested {} deep", MAX_CLAIM_VALUE_DEPTH + 1)),
            "{over}"
        );
    }

    /// `depth` objects, each the one value of the next, around a string.
    fn nested_objects(depth: usize) -> Value {
        (0..depth).fold(json!("s"), |inner, _| json!({ "v": inner }))
    }

    /// The research record marks each claimed value with whether its support meets the
    /// skill's minimum strength (annotate-unit: 0.8): code (0.9) does, a schema (0.8)
    /// just does, a document (0.6) alone does not.
    #[test]
    fn each_claimed_value_says_whether_its_support_meets_the_minimum() {
        let tmp = tempfile::tempdir().unwrap();
        // The tests scoped as schema, for an artifact exactly at the bar.
        let scopes = ["src/**=implementation", "tests/**=schema", "docs/**=doc"];
        let run = payments_run(tmp.path(), &scopes);
        assert_eq!(run.doc().policy.contract.minimum_strength, 0.8);
        let code = cite(&run, "src/payments/service.py", 32, 39);
        let schema = cite(&run, "tests/test_capture.py", 6, 8);
        let doc = cite(&run, "docs/payments.md", 4, 4);
        for (value, id) in [("s", &code.id), ("ms", &schema.id), ("min", &doc.id)] {
            claim_unit(&run, value, &[id]);
        }
        let research = run.freeze_research(None).unwrap();
        let support: Vec<(Value, f64, bool)> = research
            .values
            .iter()
            .map(|v| (v.value.clone(), v.strength, v.meets_minimum))
            .collect();
        assert_eq!(
            support,
            [
                (json!("s"), 0.9, true),
                (json!("ms"), 0.8, true),
                (json!("min"), 0.6, false)
            ]
        );
    }

    /// Stage 1 is remembered for equal inputs and stamped with each caller's time; inputs
    /// that differ only in a non-finite confidence (which JSON would write alike, as
    /// `null`) are each derived.
    #[test]
    fn a_remembered_stage_one_answers_only_its_own_inputs() {
        let tmp = tempfile::tempdir().unwrap();
        let run = payments_run(tmp.path(), &[]);
        let code = cite(&run, "src/payments/service.py", 32, 39);
        claim_unit(&run, "s", &[&code.id]);
        let evidence = crate::case::store::evidence(run.dir()).unwrap();
        let mut claims = crate::case::store::claims(run.dir()).unwrap();
        let first = super::stage_one(run.doc(), &evidence, &claims, "t1");
        let again = super::stage_one(run.doc(), &evidence, &claims, "t2");
        assert_eq!(first.at, "t1");
        assert_eq!(again.at, "t2");
        assert_eq!(
            super::ResearchRecord {
                at: "t1".into(),
                ..again
            },
            first
        );
        assert!(first.accepted(&claims.claims[0].id));
        for (confidence, said) in [(f64::NAN, "NaN"), (f64::INFINITY, "inf")] {
            claims.claims[0].confidence = confidence;
            let record = super::stage_one(run.doc(), &evidence, &claims, "t3");
            let reasons = &record.claims[0].reasons;
            assert!(
                reasons
                    .iter()
                    .any(|r| r.contains(&format!("confidence {said} "))),
                "{reasons:?}"
            );
        }
    }

    /// Objects nest as deep as arrays: a value deep in objects alone is as unreadable
    /// once stored, and small enough to pass the size limit.
    #[test]
    fn objects_count_towards_the_nesting_limit_like_arrays() {
        assert_eq!(nesting(&nested_objects(3)), 3);
        assert_eq!(nesting(&json!({"a": [1, {"b": [[]]}], "c": {}})), 5);
        at_the_depth_limit_and_one_over(nested_objects);
    }

    /// A claim citing an artifact of a kind the case's contract does not admit is refused
    /// by name, whatever put the artifact in the evidence.
    #[test]
    fn a_claim_citing_an_inadmissible_kind_is_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let run = payments_run(tmp.path(), &[]);
        let artifact = cite(&run, "src/payments/service.py", 32, 39);
        let evidence: EvidenceDoc =
            serde_json::from_slice(&std::fs::read(run.output("evidence.json")).unwrap()).unwrap();
        let claim = RawClaim {
            id: "c".into(),
            predicate: "field.unit".into(),
            value: json!("s"),
            artifact_ids: vec![artifact.id.clone()],
            confidence: 0.9,
        };
        let mut case = run.doc().clone();
        assert_eq!(
            claim_problems(&claim, &case, &evidence),
            Vec::<String>::new()
        );
        let kind = evidence.get(&artifact.id).unwrap().kind;
        case.policy.contract.admissible_kinds.retain(|k| *k != kind);
        assert_eq!(
            claim_problems(&claim, &case, &evidence),
            [format!(
                "artifact `{}` is of inadmissible kind {kind}",
                artifact.id
            )]
        );
    }

    #[test]
    fn a_value_at_the_nesting_limit_is_admitted_and_one_level_more_is_not() {
        assert_eq!(nesting(&json!("seconds")), 0);
        assert_eq!(
            nesting(&nested(MAX_CLAIM_VALUE_DEPTH)),
            MAX_CLAIM_VALUE_DEPTH
        );
        at_the_depth_limit_and_one_over(nested);
    }

    #[test]
    fn a_value_at_the_size_limit_is_admitted_and_one_byte_more_is_not() {
        // A string serialises with its two quotes.
        let at = json!("x".repeat(MAX_CLAIM_VALUE_BYTES - 2));
        assert_eq!(oversized(&at), None);
        let over = oversized(&json!("x".repeat(MAX_CLAIM_VALUE_BYTES - 1))).expect("refused");
        assert!(
            over.contains(&format!("{} bytes", MAX_CLAIM_VALUE_BYTES + 1)),
            "{over}"
        );
    }
}
