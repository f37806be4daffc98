//! What may appear in logs and traces. Every request is logged through `for_log`.

use serde_json::{json, Value};

use crate::delivery::CreateDelivery;

/// Personal data of the recipient: replaced before logging (GDPR Art. 4(1)).
const PERSONAL: &[&str] = &["recipient_name", "drop_off_address", "contact_phone"];

pub fn for_log(req: &CreateDelivery) -> Value {
    let mut value = serde_json::to_value(req).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        for key in PERSONAL {
            if let Some(v) = map.get_mut(*key) {
                if !v.is_null() {
                    *v = json!("[personal data]");
                }
            }
        }
    }
    value
}
