//! Unit tests for evidence ingestion: acquisition, path safety, classification, comment
//! detection, external excerpts, re-verification and the `evidence.json` document.

use std::fs;

use tempfile::TempDir;

use super::*;

const NOW: &str = "2026-01-01T00:00:00Z";
const REV: &str = "0123456789abcdef0123456789abcdef01234567";

fn scopes() -> Vec<Scope> {
    vec![
        Scope {
            glob: "**/tests/**".into(),
            kind: EvidenceKind::ContractTest,
        },
        Scope {
            glob: "**/*.md".into(),
            kind: EvidenceKind::Doc,
        },
        Scope {
            glob: "**/*.{rs,py,c,sql}".into(),
            kind: EvidenceKind::Implementation,
        },
        Scope {
            glob: "**/*.bin".into(),
            kind: EvidenceKind::Implementation,
        },
    ]
}

fn all() -> Vec<EvidenceKind> {
    EvidenceKind::ALL.to_vec()
}

fn repo() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let w = |p: &str, text: &[u8]| {
        let path = dir.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    w(
        "src/pay.rs",
        b"// Capture timeout.\n/// In seconds.\nfn timeout() -> u64 {\n    30\n}\n",
    );
    w("src/copy.rs", b"fn timeout() -> u64 {\n    30\n}\n");
    w("docs/api.md", b"# API\n\nTimeouts are in seconds.");
    w("tests/pay.rs", b"assert_eq!(timeout(), 30);\n");
    w("src/data.bin", b"abc\0def\n");
    w("src/latin.rs", b"// caf\xe9\n");
    w("src/empty.rs", b"");
    w("notes.txt", b"out of scope\n");
    dir
}

fn req(path: &str, start: Option<u32>, end: Option<u32>) -> EvidenceRequest {
    EvidenceRequest {
        path: path.into(),
        start_line: start,
        end_line: end,
    }
}

fn get(dir: &TempDir, r: EvidenceRequest) -> Result<EvidenceArtifact, EvidenceError> {
    get_admitting(dir, &all(), r)
}

fn get_admitting(
    dir: &TempDir,
    admissible: &[EvidenceKind],
    r: EvidenceRequest,
) -> Result<EvidenceArtifact, EvidenceError> {
    acquire(
        dir.path(),
        &Source::worktree(REV),
        &scopes(),
        admissible,
        &r,
        NOW,
    )
}

fn refusal(dir: &TempDir, r: EvidenceRequest) -> EvidenceError {
    get(dir, r).expect_err("expected a refusal")
}

#[test]
fn reads_exact_lines_and_records_a_verified_coordinate() {
    let dir = repo();
    let a = get(&dir, req("src/pay.rs", Some(3), Some(5))).unwrap();
    assert_eq!(a.excerpt, "fn timeout() -> u64 {\n    30\n}\n");
    assert_eq!(a.uri, "repo:src/pay.rs#L3-L5");
    assert_eq!(a.kind, EvidenceKind::Implementation);
    assert_eq!(a.path.as_deref(), Some("src/pay.rs"));
    assert_eq!(a.revision.as_deref(), Some(REV));
    assert_eq!((a.start_line, a.end_line), (Some(3), Some(5)));
    assert_eq!(a.content_hash, bytes_hash(a.excerpt.as_bytes()));
    assert_eq!(a.acquired_at, NOW);
    assert!(a.id.starts_with("ev-") && a.id.len() == 27);
    assert_eq!(
        a.verification,
        Verification::Verified {
            verifier: format!("anvil-bench/{}", env!("CARGO_PKG_VERSION"))
        }
    );
    assert!(a.is_verified() && a.is_local());
    assert_eq!(a.expected_id().as_deref(), Some(a.id.as_str()));
}

#[test]
fn no_range_reads_the_whole_file_even_without_a_final_newline() {
    let dir = repo();
    let a = get(&dir, req("docs/api.md", None, None)).unwrap();
    assert_eq!(a.excerpt, "# API\n\nTimeouts are in seconds.");
    assert_eq!((a.start_line, a.end_line), (Some(1), Some(3)));
    assert_eq!(a.kind, EvidenceKind::Doc);
    assert_eq!(a.uri, "repo:docs/api.md#L1-L3");
    let last = get(&dir, req("docs/api.md", Some(3), Some(3))).unwrap();
    assert_eq!(last.excerpt, "Timeouts are in seconds.");
}

#[test]
fn crlf_line_endings_are_kept_in_the_excerpt() {
    let dir = repo();
    fs::write(
        dir.path().join("src/win.rs"),
        b"let a = 1;\r\nlet b = 2;\r\n",
    )
    .unwrap();
    let a = get(&dir, req("src/win.rs", Some(1), Some(1))).unwrap();
    assert_eq!(a.excerpt, "let a = 1;\r\n");
}

#[test]
fn the_first_matching_scope_wins() {
    let dir = repo();
    let a = get(&dir, req("tests/pay.rs", None, None)).unwrap();
    assert_eq!(a.kind, EvidenceKind::ContractTest);
    assert_eq!(
        classify(&scopes(), "src/a/b.rs"),
        Some(EvidenceKind::Implementation)
    );
    assert_eq!(
        classify(&scopes(), "main.rs"),
        Some(EvidenceKind::Implementation)
    );
    assert_eq!(classify(&scopes(), "notes.txt"), None);
    assert_eq!(classify(&[], "main.rs"), None);
}

#[test]
fn ids_are_deterministic() {
    let dir = repo();
    let a = get(&dir, req("src/pay.rs", Some(3), Some(5))).unwrap();
    let b = acquire(
        dir.path(),
        &Source::worktree(REV),
        &scopes(),
        &all(),
        &req("./src//pay.rs", Some(3), Some(5)),
        "2027-06-01T00:00:00Z",
    )
    .unwrap();
    assert_eq!(a.id, b.id);
    assert_eq!(a.path, b.path);
}

#[test]
fn the_same_text_at_two_coordinates_gets_two_ids() {
    let dir = repo();
    let a = get(&dir, req("src/pay.rs", Some(3), Some(5))).unwrap();
    let b = get(&dir, req("src/copy.rs", Some(1), Some(3))).unwrap();
    assert_eq!(a.excerpt, b.excerpt);
    assert_eq!(a.content_hash, b.content_hash);
    assert_ne!(a.id, b.id);
}

#[test]
fn a_changed_revision_changes_the_id() {
    let dir = repo();
    let a = get(&dir, req("src/copy.rs", None, None)).unwrap();
    let b = acquire(
        dir.path(),
        &Source::worktree("none"),
        &scopes(),
        &all(),
        &req("src/copy.rs", None, None),
        NOW,
    )
    .unwrap();
    assert_ne!(a.id, b.id);
}

#[test]
fn comment_only_excerpts_of_implementation_files_are_comments() {
    let dir = repo();
    let a = get(&dir, req("src/pay.rs", Some(1), Some(2))).unwrap();
    assert_eq!(a.kind, EvidenceKind::Comment);
    let b = get(&dir, req("src/pay.rs", Some(1), Some(3))).unwrap();
    assert_eq!(b.kind, EvidenceKind::Implementation);
    // Docs are never downgraded, even when every line starts with `#`.
    let c = get(&dir, req("docs/api.md", Some(1), Some(1))).unwrap();
    assert_eq!(c.kind, EvidenceKind::Doc);
}

#[test]
fn comment_detection_follows_line_prefixes() {
    for text in [
        "// a\n\n   // b\n",
        "# python comment\n",
        "/* one\n * two\n */\n",
        "/*\n  inside a block\n*/\n",
        "-- sql comment\n",
        "/* a */ // b\n",
        "*\n",
        // A block's closing `**/`, and Lua's `--[[` block.
        "// a\n**/\n",
        "--[[ lua block ]]\n",
    ] {
        assert!(is_comment_only(text), "{text:?} should be a comment");
    }
    for text in [
        "",
        "\n  \n",
        "#include <stdio.h>\n",
        "#define X 1\n",
        "#if FOO\n",
        "#!/usr/bin/env python\n",
        "#[derive(Debug)]\n",
        "#![allow(dead_code)]\n",
        "*ptr = 0;\n",
        "--i;\n",
        "// doc\nlet x = 1;\n",
        // Code after the line that closes a block is code.
        "/* a\n*/ int x = 1;\n",
        "/* a\nabc */ x\n",
        "/* a */ int x;\n",
        "/* a\n*/ int x;\n",
    ] {
        assert!(!is_comment_only(text), "{text:?} should be code");
    }
}

#[test]
fn refuses_an_empty_path() {
    assert_eq!(refusal(&repo(), req("", None, None)).kind(), "empty_path");
}

#[test]
fn refuses_an_absolute_path() {
    let dir = repo();
    let abs = dir.path().join("src/pay.rs").display().to_string();
    let e = refusal(&dir, req(&abs, None, None));
    assert_eq!(e.kind(), "absolute_path");
    assert!(e.to_string().contains(&abs));
}

#[test]
fn refuses_a_dotdot_escape() {
    let dir = repo();
    for p in ["../etc/passwd", "src/../src/pay.rs", "src/.."] {
        let e = refusal(&dir, req(p, None, None));
        assert_eq!(e.kind(), "path_escape", "{p}");
        assert!(e.to_string().contains(p));
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_leaving_the_repository_is_refused() {
    let dir = repo();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.rs"), b"let secret = 1;\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.rs"),
        dir.path().join("src/leak.rs"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("ext")).unwrap();
    std::os::unix::fs::symlink("../../nowhere/x.rs", dir.path().join("src/dangling.rs")).unwrap();
    for p in ["src/leak.rs", "ext/secret.rs", "src/dangling.rs"] {
        let e = refusal(&dir, req(p, None, None));
        assert_eq!(e.kind(), "symlink_escape", "{p}: {e}");
        assert!(e.to_string().contains(p));
    }
    assert_eq!(
        resolve_path(dir.path(), "ext/secret.rs")
            .unwrap_err()
            .kind(),
        "symlink_escape"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_the_repository_records_its_canonical_target() {
    let dir = repo();
    std::os::unix::fs::symlink("pay.rs", dir.path().join("src/alias.rs")).unwrap();
    std::os::unix::fs::symlink("docs", dir.path().join("manual")).unwrap();
    // Classified by where it resolves: the `.txt` name does not put it out of scope.
    std::os::unix::fs::symlink("src/copy.rs", dir.path().join("link.txt")).unwrap();
    let a = get(&dir, req("src/alias.rs", Some(3), Some(5))).unwrap();
    let direct = get(&dir, req("src/pay.rs", Some(3), Some(5))).unwrap();
    assert_eq!(a.path.as_deref(), Some("src/pay.rs"));
    assert_eq!(a.id, direct.id);
    let b = get(&dir, req("manual/api.md", None, None)).unwrap();
    assert_eq!(b.path.as_deref(), Some("docs/api.md"));
    let c = get(&dir, req("link.txt", None, None)).unwrap();
    assert_eq!(c.path.as_deref(), Some("src/copy.rs"));
    assert_eq!(c.kind, EvidenceKind::Implementation);
    let (rel, abs) = resolve_path(dir.path(), "manual/api.md").unwrap();
    assert_eq!(rel, "docs/api.md");
    assert_eq!(
        abs,
        fs::canonicalize(dir.path().join("docs/api.md")).unwrap()
    );
}

#[test]
fn refuses_a_missing_file() {
    let dir = repo();
    for p in ["src/nope.rs", "src/pay.rs/inner.rs", "nodir/x.rs"] {
        let e = refusal(&dir, req(p, None, None));
        assert_eq!(e.kind(), "missing_file", "{p}");
        assert!(e.to_string().contains(p));
    }
}

#[test]
fn refuses_a_directory() {
    let dir = repo();
    for p in ["src", ".", "src/"] {
        assert_eq!(
            refusal(&dir, req(p, None, None)).kind(),
            "not_a_file",
            "{p}"
        );
    }
}

#[test]
fn refuses_a_path_outside_every_scope() {
    let dir = repo();
    let e = refusal(&dir, req("notes.txt", None, None));
    assert_eq!(e.kind(), "out_of_scope");
    assert!(e.to_string().contains("notes.txt"));
}

#[test]
fn refuses_an_inadmissible_kind() {
    let dir = repo();
    let only_impl = [EvidenceKind::Implementation];
    let e = acquire(
        dir.path(),
        &Source::worktree(REV),
        &scopes(),
        &only_impl,
        &req("docs/api.md", None, None),
        NOW,
    )
    .unwrap_err();
    assert_eq!(e.kind(), "inadmissible_kind");
    assert!(e.to_string().contains("docs/api.md"));
    // The derived kind is what must be admissible: a comment-only excerpt.
    let e = acquire(
        dir.path(),
        &Source::worktree(REV),
        &scopes(),
        &only_impl,
        &req("src/pay.rs", Some(1), Some(2)),
        NOW,
    )
    .unwrap_err();
    assert_eq!(e.kind(), "inadmissible_kind");
    assert!(e.to_string().contains("comment"));
}

/// An implementation scope may still yield a comment, so a skill admitting comments but
/// not implementation reads a comment-only excerpt there; any other inadmissible scope is
/// refused before its file is read (an empty doc is refused for its kind, not its bytes).
#[test]
fn an_inadmissible_scope_is_refused_before_reading_unless_it_may_yield_a_comment() {
    let dir = repo();
    fs::write(dir.path().join("docs/empty.md"), b"").unwrap();
    let only_comments = [EvidenceKind::Comment];
    let a = get_admitting(&dir, &only_comments, req("src/pay.rs", Some(1), Some(2))).unwrap();
    assert_eq!(a.kind, EvidenceKind::Comment);
    let e = get_admitting(&dir, &only_comments, req("docs/empty.md", None, None)).unwrap_err();
    assert_eq!(e.kind(), "inadmissible_kind", "{e}");
    assert_eq!(
        refusal(&dir, req("docs/empty.md", None, None)).kind(),
        "empty_file"
    );
}

#[test]
fn refuses_a_binary_file() {
    let e = refusal(&repo(), req("src/data.bin", None, None));
    assert_eq!(e.kind(), "binary_file");
    assert!(e.to_string().contains("src/data.bin"));
}

#[test]
fn refuses_a_non_utf8_file() {
    let e = refusal(&repo(), req("src/latin.rs", None, None));
    assert_eq!(e.kind(), "not_utf8");
    assert!(e.to_string().contains("src/latin.rs"));
}

#[test]
fn refuses_an_empty_file() {
    let e = refusal(&repo(), req("src/empty.rs", None, None));
    assert_eq!(e.kind(), "empty_file");
    assert!(e.to_string().contains("src/empty.rs"));
}

#[test]
fn refuses_a_half_given_range() {
    let dir = repo();
    assert_eq!(
        refusal(&dir, req("src/pay.rs", Some(1), None)).kind(),
        "invalid_range"
    );
    assert_eq!(
        refusal(&dir, req("src/pay.rs", None, Some(2))).kind(),
        "invalid_range"
    );
}

#[test]
fn refuses_an_invalid_range_naming_the_line_count() {
    let dir = repo();
    for (start, end) in [(0, 2), (4, 3), (2, 6)] {
        let e = refusal(&dir, req("src/pay.rs", Some(start), Some(end)));
        assert_eq!(e.kind(), "invalid_range", "{start}-{end}");
        let msg = e.to_string();
        assert!(msg.contains("has 5 lines"), "{msg}");
        assert!(msg.contains(&format!("L{start}-L{end}")), "{msg}");
        assert!(msg.contains("src/pay.rs"), "{msg}");
    }
}

#[test]
fn external_excerpts_are_unverified() {
    let a = acquire_external(
        "confluence",
        "https://wiki/x",
        "Timeouts are in seconds.",
        &all(),
        NOW,
    )
    .unwrap();
    assert_eq!(a.kind, EvidenceKind::External);
    assert_eq!(
        a.verification,
        Verification::Unverified {
            reason: EXTERNAL_UNVERIFIED_REASON.into()
        }
    );
    assert!(!a.is_verified() && !a.is_local());
    assert_eq!((a.path.as_ref(), a.revision.as_ref()), (None, None));
    assert_eq!(a.source.as_deref(), Some("confluence"));
    let b = acquire_external(
        "confluence",
        "https://wiki/y",
        "Timeouts are in seconds.",
        &all(),
        NOW,
    )
    .unwrap();
    assert_ne!(a.id, b.id);
    let again = acquire_external(
        "confluence",
        "https://wiki/x",
        "Timeouts are in seconds.",
        &all(),
        "later",
    )
    .unwrap();
    assert_eq!(a.id, again.id);
    assert_eq!(a.expected_id().as_deref(), Some(a.id.as_str()));
    assert_eq!(
        reverify(Path::new("."), &Source::worktree(REV), &a)
            .unwrap_err()
            .kind(),
        "not_local"
    );
    // The kind decides, not a stray coordinate: an external excerpt carrying a path is
    // still not read back from the repository.
    let dir = repo();
    let mut with_path = a.clone();
    with_path.path = Some("src/pay.rs".into());
    assert!(!with_path.is_local());
    assert_eq!(
        reverify(dir.path(), &Source::worktree(REV), &with_path)
            .unwrap_err()
            .kind(),
        "not_local"
    );
}

#[test]
fn refuses_external_evidence_when_not_admissible() {
    let e =
        acquire_external("wiki", "https://wiki/x", "text", &[EvidenceKind::Doc], NOW).unwrap_err();
    assert_eq!(e.kind(), "inadmissible_kind");
    assert!(e.to_string().contains("https://wiki/x"));
}

#[test]
fn refuses_an_empty_external_excerpt() {
    for excerpt in ["", "  \n"] {
        let e = acquire_external("wiki", "https://wiki/x", excerpt, &all(), NOW).unwrap_err();
        assert_eq!(e.kind(), "empty_excerpt");
        assert!(e.to_string().contains("https://wiki/x"));
    }
}

#[test]
fn refuses_an_external_excerpt_without_source_or_uri() {
    let e = acquire_external("", "https://wiki/x", "text", &all(), NOW).unwrap_err();
    assert_eq!(e.kind(), "invalid_external");
    let e = acquire_external("wiki", " ", "text", &all(), NOW).unwrap_err();
    assert_eq!(e.kind(), "invalid_external");
}

#[test]
fn reverify_passes_until_the_source_is_edited() {
    let dir = repo();
    let a = get(&dir, req("src/pay.rs", Some(3), Some(5))).unwrap();
    reverify(dir.path(), &Source::worktree(REV), &a).unwrap();
    // Edits outside the range do not matter.
    fs::write(
        dir.path().join("src/pay.rs"),
        b"// Capture timeout!\n/// In seconds.\nfn timeout() -> u64 {\n    30\n}\n",
    )
    .unwrap();
    reverify(dir.path(), &Source::worktree(REV), &a).unwrap();
    fs::write(
        dir.path().join("src/pay.rs"),
        b"// Capture timeout.\n/// In seconds.\nfn timeout() -> u64 {\n    60\n}\n",
    )
    .unwrap();
    let e = reverify(dir.path(), &Source::worktree(REV), &a).unwrap_err();
    assert_eq!(e.kind(), "source_changed");
    assert!(e.to_string().contains("repo:src/pay.rs#L3-L5"));
    fs::write(dir.path().join("src/pay.rs"), b"fn x() {}\n").unwrap();
    assert_eq!(
        reverify(dir.path(), &Source::worktree(REV), &a)
            .unwrap_err()
            .kind(),
        "source_changed"
    );
}

#[test]
fn reverify_fails_when_the_file_is_gone() {
    let dir = repo();
    let a = get(&dir, req("src/copy.rs", None, None)).unwrap();
    fs::remove_file(dir.path().join("src/copy.rs")).unwrap();
    let e = reverify(dir.path(), &Source::worktree(REV), &a).unwrap_err();
    assert_eq!(e.kind(), "missing_file");
    assert!(e.to_string().contains("src/copy.rs"));
}

#[test]
fn reverify_refuses_a_tampered_artifact() {
    let dir = repo();
    let a = get(&dir, req("src/copy.rs", None, None)).unwrap();
    let mut forged = a.clone();
    forged.excerpt = "fn timeout() -> u64 { 60 }\n".into();
    assert_eq!(
        reverify(dir.path(), &Source::worktree(REV), &forged)
            .unwrap_err()
            .kind(),
        "inconsistent_artifact"
    );
    let mut moved = a.clone();
    moved.start_line = Some(2);
    assert_eq!(
        reverify(dir.path(), &Source::worktree(REV), &moved)
            .unwrap_err()
            .kind(),
        "inconsistent_artifact"
    );
}

/// A recorded range no file can have (line 0, reversed, or past the end), in an artifact
/// whose id and uri were made to match it, is refused as a source that changed before any
/// excerpt is cut: each bound is checked alone.
#[test]
fn reverify_refuses_a_range_no_file_has() {
    let dir = repo();
    let a = get(&dir, req("src/pay.rs", Some(3), Some(5))).unwrap();
    let lines = fs::read_to_string(dir.path().join("src/pay.rs"))
        .unwrap()
        .lines()
        .count();
    let past = u32::try_from(lines).unwrap() + 1;
    for (start, end) in [(0, 2), (4, 3), (3, 99), (3, past)] {
        let mut forged = a.clone();
        forged.start_line = Some(start);
        forged.end_line = Some(end);
        forged.uri = format!("repo:src/pay.rs#L{start}-L{end}");
        forged.id = forged.expected_id().unwrap();
        let e = reverify(dir.path(), &Source::worktree(REV), &forged).unwrap_err();
        assert_eq!(e.kind(), "source_changed", "{start}-{end}: {e}");
        let absent = format!("absent (the file now has {lines} lines)");
        assert!(e.to_string().contains(&absent), "{start}-{end}: {e}");
    }
}

#[test]
fn the_document_round_trips_strictly() {
    let dir = repo();
    let mut doc = EvidenceDoc::empty();
    let a = get(&dir, req("src/pay.rs", Some(3), Some(5))).unwrap();
    assert!(doc.insert(a.clone()));
    assert!(!doc.insert(a.clone()));
    assert!(doc.insert(acquire_external("wiki", "https://wiki/x", "text", &all(), NOW).unwrap()));
    doc.check_format().unwrap();
    let text = serde_json::to_string_pretty(&doc).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["format"], "anvil-evidence");
    assert_eq!(value["formatVersion"], 1);
    assert_eq!(value["artifacts"][0]["startLine"], 3);
    assert_eq!(value["artifacts"][0]["verification"]["status"], "verified");
    assert_eq!(
        value["artifacts"][1]["verification"]["status"],
        "unverified"
    );
    assert_eq!(value["artifacts"][1]["kind"], "external");
    let back: EvidenceDoc = serde_json::from_str(&text).unwrap();
    assert_eq!(back, doc);
    assert_eq!(back.get(&a.id), Some(&a));

    let mut extra = value.clone();
    extra["artifacts"][0]["verified"] = true.into();
    assert!(serde_json::from_value::<EvidenceDoc>(extra).is_err());
    let mut extra = value.clone();
    extra["artifacts"][0]["verification"]["extra"] = 1.into();
    assert!(serde_json::from_value::<EvidenceDoc>(extra).is_err());

    let mut other = doc.clone();
    other.format_version = 2;
    assert_eq!(
        other.check_format().unwrap_err().kind(),
        "unsupported_format"
    );
}

/// The repository scan lists in-scope regular files only, in path order with their sizes:
/// no out-of-scope file, nothing under `.git` or inside a run, no symlink; and at most
/// `limit`.
#[test]
fn in_scope_files_lists_only_in_scope_regular_files_outside_runs() {
    let dir = repo();
    let w = |p: &str, text: &str| {
        let path = dir.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    w(".git/hooks/pre-commit.rs", "fn main() {}\n");
    w("runs/r1/case.json", "{}");
    w("runs/r1/lifecycle.json", "{}");
    w("runs/r1/workspace/fake.rs", "fn timeout() -> u64 { 1 }\n");
    std::os::unix::fs::symlink(
        dir.path().join("src/pay.rs"),
        dir.path().join("src/link.rs"),
    )
    .unwrap();
    let listed = in_scope_files(dir.path(), &scopes(), 100);
    let names: Vec<&str> = listed.iter().map(|(rel, _)| rel.as_str()).collect();
    assert_eq!(
        names,
        [
            "docs/api.md",
            "src/copy.rs",
            "src/data.bin",
            "src/empty.rs",
            "src/latin.rs",
            "src/pay.rs",
            "tests/pay.rs"
        ]
    );
    let size = |rel: &str| fs::metadata(dir.path().join(rel)).unwrap().len();
    assert!(listed.iter().all(|(rel, n)| *n == size(rel)));
    assert_eq!(in_scope_files(dir.path(), &scopes(), 3).len(), 3);
}
