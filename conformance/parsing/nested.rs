//! R-PARSE-1 inside nested tagged objects: `verification` in evidence.json is an internally
//! tagged enum, where an unknown key is easy to lose; it is refused like any other.

use crate::support::rails;
use libtest_mimic::Failed;
use serde_json::json;

use super::unknown_rejection;
use crate::ensure;
use crate::support::{
    World, externals, failed, lifecycle_json, msg, out, read_json, unit_research, write_json,
};

/// A hand-written key inside `verification`, on a verified local artifact and on an
/// unverified external one, is rejected at freeze naming its exact path.
pub(super) fn unknown_field_in_verification() -> Result<(), Failed> {
    for status in ["verified", "unverified"] {
        let w = World::new();
        let u = unit_research(&w)?;
        externals(&u.run, 1)?;
        let path = out(&u.run, "evidence.json");
        let mut doc = read_json(&path);
        let Some(index) = doc["artifacts"]
            .as_array()
            .and_then(|a| a.iter().position(|a| a["verification"]["status"] == status))
        else {
            return Err(format!("test setup: no {status} artifact in {doc}").into());
        };
        doc["artifacts"][index]["verification"]["checkedBy"] = json!("agent");
        write_json(&path, &doc);
        let d = unknown_rejection(
            rails::freeze_research(&u.run, None),
            "output/evidence.json",
            "checkedBy",
        )
        .map_err(|e| failed(format!("{status} artifact: {}", msg(&e))))?;
        let want = format!("artifacts[{index}].verification.checkedBy");
        ensure!(
            d.field == want,
            "{status} artifact: field `{}`, expected `{want}`",
            d.field
        );
        ensure!(
            lifecycle_json(&u.run)["state"] == "open",
            "{status} artifact: a rejected evidence.json was frozen"
        );
    }
    Ok(())
}
