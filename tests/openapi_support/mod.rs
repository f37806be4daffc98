//! Helpers shared by the `OpenAPI` test crates: the fixtures, the CLI, parsing.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anvil_bench::air::Air;
use anvil_bench::air::openapi::{self, Document, OpenApiError};

pub const REAL: [&str; 3] = [
    "museum-openapi-3.1.yaml",
    "petstore-openapi-3.0.yaml",
    "link-example-3.0.yaml",
];
pub const WRITTEN: [&str; 2] = ["swagger-2.0-orders.yaml", "widgets-3.0.json"];

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openapi")
        .join(name)
}

pub fn cli(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

pub fn ok(dir: &Path, args: &[&str]) -> String {
    let out = cli(dir, args);
    assert!(
        out.status.success(),
        "{args:?} failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn parse(text: &str) -> Document {
    Document::parse(text.to_string(), "spec.yaml").unwrap()
}

pub fn import_text(text: &str) -> Result<Air, OpenApiError> {
    openapi::import(&parse(text)).map(|i| i.air)
}
