//! Evidence ingestion and freezing: the engine reads, classifies, hashes and freezes every
//! excerpt from a repository coordinate; the agent can only point (R-EV-1..9, R-EV-11,
//! R-PARSE-2).
//! Trials by area live in `evidence/` (path refusals, what an artifact is, tampered
//! evidence, admissible kinds); the list and the shared helpers are here.

mod admissible;
mod artifacts;
mod paths;
mod tamper;

use std::path::Path;

use crate::Check;
use paths::refused_path;

pub fn checks() -> Vec<Check> {
    vec![
        // R-EV-2: absolute paths, `..` escapes, symlinks leaving the repository.
        Check {
            name: "evidence::an_absolute_path_is_refused_even_inside_the_repository",
            rules: &["R-EV-2"],
            run: || {
                refused_path(
                    |w| {
                        w.repo()
                            .join("src/payments/service.py")
                            .display()
                            .to_string()
                    },
                    Some((32, 39)),
                    "absolute_path",
                )
            },
        },
        Check {
            name: "evidence::a_dotdot_escape_is_refused",
            rules: &["R-EV-2"],
            run: || refused_path(|_| "../air.json".into(), None, "path_escape"),
        },
        Check {
            name: "evidence::a_dotdot_escape_from_deep_inside_is_refused",
            rules: &["R-EV-2"],
            run: || {
                refused_path(
                    |_| "src/payments/../../../air.json".into(),
                    None,
                    "path_escape",
                )
            },
        },
        Check {
            name: "evidence::a_symlinked_file_leaving_the_repository_is_refused",
            rules: &["R-EV-2"],
            run: || {
                refused_path(
                    |w| {
                        std::os::unix::fs::symlink(w.air(), w.repo().join("src/payments/leak.py"))
                            .unwrap();
                        "src/payments/leak.py".into()
                    },
                    None,
                    "symlink_escape",
                )
            },
        },
        Check {
            name: "evidence::a_symlinked_directory_leaving_the_repository_is_refused",
            rules: &["R-EV-2"],
            run: || {
                refused_path(
                    |w| {
                        std::os::unix::fs::symlink(w.root(), w.repo().join("docs/outside"))
                            .unwrap();
                        "docs/outside/air.json".into()
                    },
                    None,
                    "symlink_escape",
                )
            },
        },
        Check {
            name: "evidence::a_symlink_inside_the_repository_is_recorded_at_its_canonical_path",
            rules: &["R-EV-2", "R-EV-6"],
            run: paths::symlink_inside_canonical,
        },
        // R-EV-3
        Check {
            name: "evidence::a_path_outside_every_inspect_scope_is_refused",
            rules: &["R-EV-3"],
            run: || {
                refused_path(
                    |w| {
                        std::fs::write(w.repo().join("LICENSE"), "MIT\n").unwrap();
                        "LICENSE".into()
                    },
                    None,
                    "out_of_scope",
                )
            },
        },
        Check {
            name: "evidence::a_path_outside_the_cases_own_scopes_is_refused",
            rules: &["R-EV-3"],
            run: paths::outside_custom_scopes,
        },
        Check {
            name: "evidence::a_single_star_scope_stops_at_a_slash",
            rules: &["R-EV-3"],
            run: paths::a_single_star_scope_stops_at_a_slash,
        },
        Check {
            name: "evidence::a_nul_byte_past_the_first_block_still_makes_a_binary_file",
            rules: &["R-EV-4"],
            run: || {
                refused_path(
                    |w| {
                        let mut bytes =
                            "capture_timeout = 30  # seconds\n".repeat(400).into_bytes();
                        bytes.extend_from_slice(b"\x00 trailer\n");
                        std::fs::write(w.repo().join("src/payments/late_nul.py"), bytes).unwrap();
                        "src/payments/late_nul.py".into()
                    },
                    None,
                    "binary_file",
                )
            },
        },
        // R-EV-4
        Check {
            name: "evidence::a_missing_file_is_refused",
            rules: &["R-EV-4"],
            run: || refused_path(|_| "src/payments/refunds.py".into(), None, "missing_file"),
        },
        Check {
            name: "evidence::a_directory_is_refused",
            rules: &["R-EV-4"],
            run: || refused_path(|_| "src/payments".into(), None, "not_a_file"),
        },
        Check {
            name: "evidence::a_binary_file_is_refused",
            rules: &["R-EV-4"],
            run: || {
                refused_path(
                    |w| {
                        std::fs::write(
                            w.repo().join("src/payments/blob.py"),
                            b"capture = 1\n\x00\x01\x02 seconds\n",
                        )
                        .unwrap();
                        "src/payments/blob.py".into()
                    },
                    None,
                    "binary_file",
                )
            },
        },
        Check {
            name: "evidence::a_non_utf8_file_is_refused",
            rules: &["R-EV-4"],
            run: || {
                refused_path(
                    |w| {
                        std::fs::write(
                            w.repo().join("docs/latin1.md"),
                            b"capture_timeout: dur\xe9e en secondes\n",
                        )
                        .unwrap();
                        "docs/latin1.md".into()
                    },
                    None,
                    "not_utf8",
                )
            },
        },
        // R-EV-5
        Check {
            name: "evidence::a_reversed_line_range_is_refused",
            rules: &["R-EV-5"],
            run: || {
                refused_path(
                    |_| "src/payments/service.py".into(),
                    Some((39, 32)),
                    "invalid_range",
                )
            },
        },
        Check {
            name: "evidence::a_line_range_past_the_end_of_the_file_is_refused",
            rules: &["R-EV-5"],
            run: || {
                refused_path(
                    |_| "src/payments/service.py".into(),
                    Some((50, 55)),
                    "invalid_range",
                )
            },
        },
        Check {
            name: "evidence::a_line_range_starting_after_the_last_line_is_refused",
            rules: &["R-EV-5"],
            run: || {
                refused_path(
                    |_| "src/payments/service.py".into(),
                    Some((55, 55)),
                    "invalid_range",
                )
            },
        },
        Check {
            name: "evidence::line_zero_is_refused",
            rules: &["R-EV-5"],
            run: || {
                refused_path(
                    |_| "src/payments/service.py".into(),
                    Some((0, 3)),
                    "invalid_range",
                )
            },
        },
        Check {
            name: "evidence::the_cli_refuses_a_bad_coordinate_with_exit_1_naming_it",
            rules: &["R-EV-2", "R-EV-5"],
            run: paths::cli_refusals,
        },
        // R-EV-6
        Check {
            name: "evidence::the_excerpt_is_the_exact_bytes_read_with_their_hash_and_coordinate",
            rules: &["R-EV-6"],
            run: artifacts::exact_bytes,
        },
        Check {
            name: "evidence::line_endings_and_a_missing_final_newline_are_kept_exactly",
            rules: &["R-EV-6"],
            run: artifacts::exact_crlf,
        },
        Check {
            name: "evidence::no_range_means_the_whole_file",
            rules: &["R-EV-6"],
            run: artifacts::whole_file,
        },
        // R-EV-7
        Check {
            name: "evidence::identical_text_in_two_files_gets_two_ids",
            rules: &["R-EV-7"],
            run: artifacts::same_text_two_files,
        },
        Check {
            name: "evidence::identical_lines_at_two_places_in_one_file_get_two_ids",
            rules: &["R-EV-7"],
            run: artifacts::same_text_two_ranges,
        },
        Check {
            name: "evidence::the_id_derives_from_the_coordinate_and_one_coordinate_is_one_artifact",
            rules: &["R-EV-7"],
            run: artifacts::id_from_coordinate,
        },
        // R-EV-8
        Check {
            name: "evidence::the_kind_comes_from_the_matching_inspect_scope",
            rules: &["R-EV-8"],
            run: artifacts::kind_from_scope,
        },
        Check {
            name: "evidence::the_first_matching_scope_decides_the_kind",
            rules: &["R-EV-8"],
            run: artifacts::kind_first_match,
        },
        Check {
            name: "evidence::a_comment_only_excerpt_of_an_implementation_file_is_comment",
            rules: &["R-EV-8"],
            run: artifacts::comment_kind,
        },
        Check {
            name: "evidence::the_cli_takes_no_kind_from_the_agent",
            rules: &["R-EV-8"],
            run: artifacts::cli_no_kind,
        },
        Check {
            name: "evidence::a_hand_written_artifact_relabelled_with_a_stronger_kind_is_refused_at_freeze",
            rules: &["R-EV-8", "R-EV-11"],
            run: tamper::relabelled_kind,
        },
        // R-EV-9
        Check {
            name: "evidence::local_is_verified_and_external_unverified_with_a_reason_in_one_status_field",
            rules: &["R-EV-9"],
            run: artifacts::verification_status,
        },
        Check {
            name: "evidence::an_external_artifact_claiming_to_be_verified_is_refused_at_freeze",
            rules: &["R-EV-9", "R-EV-1"],
            run: tamper::external_claims_verified,
        },
        // R-EV-1, R-EV-11
        Check {
            name: "evidence::a_forged_verified_excerpt_in_a_hand_written_evidence_json_is_refused_at_freeze",
            rules: &["R-EV-1", "R-EV-11"],
            run: tamper::forged_excerpt,
        },
        Check {
            name: "evidence::a_hand_written_but_exact_evidence_json_is_accepted_at_freeze",
            rules: &["R-EV-1"],
            run: tamper::honest_hand_written,
        },
        Check {
            name: "evidence::an_edit_of_frozen_evidence_json_is_detected_by_the_next_rail",
            rules: &["R-EV-11", "R-LC-3"],
            run: tamper::frozen_evidence_edit,
        },
        // R-PARSE-2
        Check {
            name: "evidence::an_inadmissible_kind_is_refused_at_the_rail",
            rules: &["R-PARSE-2"],
            run: admissible::inadmissible_at_rail,
        },
        Check {
            name: "evidence::a_hand_written_artifact_of_an_inadmissible_kind_grounds_nothing",
            rules: &["R-PARSE-2"],
            run: admissible::inadmissible_hand_written,
        },
    ]
}

/// The file's lines with their endings.
fn lines_of(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split_inclusive('\n').map(str::to_string).collect()
}
