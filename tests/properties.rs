//! Properties: case keys are path-safe and injective; the AIR hash ignores key order and
//! formatting.

use anvil_bench::air::{Air, Location, TargetKey};
use anvil_bench::case::CaseKey;
use proptest::prelude::*;
use serde_json::Value;

fn field_name() -> impl Strategy<Value = String> {
    // Dotted segments of arbitrary printable characters, including separators and
    // shell-special ones.
    proptest::collection::vec("[^\\s.\\p{C}]{1,12}", 1..4).prop_map(|segs| segs.join("."))
}

fn target() -> impl Strategy<Value = TargetKey> {
    // Up to 40 bytes: ids held inline (up to 24) and on the heap.
    let op = "[A-Za-z0-9_-]{1,40}";
    prop_oneof![
        op.prop_map(|op| TargetKey::Operation { op: op.into() }),
        (
            op,
            prop::sample::select(Location::ALL.to_vec()),
            field_name()
        )
            .prop_map(|(op, location, name)| TargetKey::Field {
                op: op.into(),
                location,
                name: name.into(),
            }),
        (op, "[A-Za-z0-9_-]{1,40}").prop_map(|(op, code)| TargetKey::Error {
            op: op.into(),
            code: code.into(),
        }),
        "[A-Za-z0-9_-]{1,40}".prop_map(|id| TargetKey::Capability { id: id.into() }),
    ]
}

fn skill() -> impl Strategy<Value = String> {
    prop::sample::select(anvil_bench::skill::registry().names()).prop_map(str::to_string)
}

proptest! {
    #[test]
    fn case_keys_are_path_safe(skill in skill(), target in target()) {
        let key = CaseKey::new(&skill, &target);
        let s = key.as_str();
        prop_assert!(s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')), "{s:?}");
        prop_assert!(!s.contains(".."));
        prop_assert!(!s.starts_with('.') && !s.starts_with('-'));
        prop_assert!(s.len() < 200);
    }

    #[test]
    fn case_keys_are_injective(a in (skill(), target()), b in (skill(), target())) {
        let ka = CaseKey::new(&a.0, &a.1);
        let kb = CaseKey::new(&b.0, &b.1);
        prop_assert_eq!(a == b, ka == kb, "{:?} {:?} -> {} {}", a, b, ka, kb);
    }

    #[test]
    fn target_keys_round_trip(target in target()) {
        let text = target.to_string();
        prop_assert_eq!(text.parse::<TargetKey>().unwrap(), target);
    }

    #[test]
    fn air_hash_ignores_key_order_and_formatting(seed in any::<u64>(), indent in 0usize..4) {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/payments/air.json")).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let original = Air::from_value(value.clone(), "air.json").unwrap().hash();
        let shuffled = shuffle(&value, seed);
        let rendered = render(&shuffled, indent);
        let reparsed = Air::parse(&rendered, false, "air.json").unwrap();
        prop_assert_eq!(reparsed.hash(), original.clone());
        // And the same document as YAML.
        let yaml = serde_yaml_ng::to_string(&shuffled).unwrap();
        prop_assert_eq!(Air::parse(&yaml, true, "air.yaml").unwrap().hash(), original);
    }
}

/// Reorders every object's keys by a seed-driven permutation.
fn shuffle(v: &Value, seed: u64) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map
                .iter()
                .map(|(k, v)| (k.clone(), shuffle(v, seed.rotate_left(7) ^ 0x9e37)))
                .collect();
            entries.sort_by_key(|(k, _)| {
                let mut h = seed;
                for b in k.bytes() {
                    h = h.wrapping_mul(31).wrapping_add(u64::from(b));
                }
                h
            });
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| shuffle(i, seed)).collect()),
        other => other.clone(),
    }
}

fn render(v: &Value, indent: usize) -> String {
    if indent == 0 {
        return serde_json::to_string(v).unwrap();
    }
    let pad = " ".repeat(indent);
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(v, &mut ser).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn a_semantic_change_changes_the_air_hash() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/payments/air.json"
    ))
    .unwrap();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    let before = Air::from_value(value.clone(), "air.json").unwrap().hash();
    value["operations"][0]["fields"][0]["description"] = "Amount to charge, in minor units.".into();
    assert_ne!(Air::from_value(value, "air.json").unwrap().hash(), before);
}
