//! The bundled corpus in the repository root passes `anvil-bench scenarios check`, coverage
//! rules included: what CI runs.

use std::process::{Command, Stdio};

#[test]
fn the_bundled_corpus_passes_scenarios_check() {
    let out = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        // The oracle over the bundled corpus runs in the `battery` test target.
        .args(["scenarios", "check", "--no-oracle"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("run anvil-bench");
    assert!(
        out.status.success(),
        "scenarios check failed on the bundled corpus:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
