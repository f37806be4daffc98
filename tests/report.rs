//! Reports of battery results: report.md snapshots (one battery and a diff), the committed
//! example regenerating byte for byte, the chart's bars read back from the SVG against
//! results.json, `JUnit`, escaping, and the `report` CLI. The fixtures under
//! `tests/fixtures/report/` are results.json files of real batteries (`--class documented
//! --class conflicting`, heuristic and oracle), kept without their runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anvil_bench::battery::results::ResultsDoc;
use anvil_bench::report::{self, Format, Loaded, charts, diff, markdown, model};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/report").join(name)
}

fn example() -> PathBuf {
    root().join("reports/example")
}

fn load(dir: &Path) -> Loaded {
    report::load(dir).unwrap()
}

/// Digests, times and this checkout's path are not what a reader reviews.
fn filters() -> Vec<(String, &'static str)> {
    vec![
        (regex_escape(&root().display().to_string()), "[ROOT]"),
        (r"`[0-9a-f]{12}`".into(), "`[hash]`"),
        (r"(corpus|label seal) [0-9a-f]{12}".into(), "$1 [hash]"),
        (r"sha256:[0-9a-f]{64}".into(), "sha256:[hash]"),
        (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC".into(), "[time]"),
    ]
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

macro_rules! snapshot {
    ($name:expr, $value:expr) => {{
        let mut settings = insta::Settings::clone_current();
        for (pattern, replacement) in filters() {
            settings.add_filter(&pattern, replacement);
        }
        settings.bind(|| insta::assert_snapshot!($name, $value));
    }};
}

#[test]
fn report_md_of_a_battery_reads_as_a_pr_comment() {
    let l = load(&fixture("heuristic"));
    snapshot!("report_md_heuristic", markdown::render(&l.doc));
}

#[test]
fn report_md_of_a_diff_names_the_flipped_scenarios() {
    let d = diff::diff(
        &load(&fixture("heuristic")),
        &load(&fixture("oracle")),
        false,
    )
    .unwrap();
    assert!(!d.wrong_to_right.is_empty(), "the oracle fixes something");
    snapshot!("report_md_diff_heuristic_oracle", markdown::render_diff(&d));
}

fn with_manifest(dir: &Path, field: &str, value: &str) -> PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("oracle").join("results.json")).unwrap())
            .unwrap();
    doc["manifest"][field] = serde_json::json!(value);
    let out = dir.join(field);
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("results.json"), doc.to_string()).unwrap();
    out
}

#[test]
fn diff_refuses_runs_on_other_inputs_naming_the_fields_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let other = with_manifest(tmp.path(), "corpusDigest", "sha256:0000");
    let a = load(&fixture("heuristic"));
    let b = load(&other);
    let err = diff::diff(&a, &b, false).unwrap_err().to_string();
    assert!(
        err.contains("`corpusDigest`") && err.contains("--force"),
        "{err}"
    );
    assert!(!err.contains("labelSeal"), "{err}");
    let forced = diff::diff(&a, &b, true).unwrap();
    let named: Vec<&str> = forced.forced.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(named, ["corpusDigest"]);
    assert!(markdown::render_diff(&forced).contains("Compared with --force"));

    let sealed = with_manifest(tmp.path(), "labelSeal", "sha256:1111");
    let err = diff::diff(&a, &load(&sealed), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("`labelSeal`"), "{err}");
}

#[test]
fn diff_verdicts_follow_the_interval() {
    let d = diff::diff(
        &load(&fixture("heuristic")),
        &load(&fixture("oracle")),
        false,
    )
    .unwrap();
    for c in d.classes.iter().chain(std::iter::once(&d.overall)) {
        let (low, high) = (c.low.unwrap(), c.high.unwrap());
        let want = if low > 0.0 {
            "better"
        } else if high < 0.0 {
            "worse"
        } else {
            "no detectable change"
        };
        assert_eq!(c.verdict, want, "{c:?}");
    }
    // Against itself nothing changes, and nothing flips.
    let same = diff::diff(&load(&fixture("oracle")), &load(&fixture("oracle")), false).unwrap();
    assert!(same.right_to_wrong.is_empty() && same.wrong_to_right.is_empty());
    assert!(
        same.classes
            .iter()
            .all(|c| c.verdict == "no detectable change")
    );
}

#[test]
fn the_committed_example_regenerates_byte_identically_from_its_results_json() {
    let l = load(&example());
    let mut stale = Vec::new();
    for (file, format) in [
        (report::REPORT_MD, Format::Markdown),
        (report::REPORT_HTML, Format::Html),
    ] {
        let committed = std::fs::read_to_string(example().join(file)).unwrap_or_default();
        let rendered = report::render(&l.doc, &l.dir, format).unwrap();
        if rendered != committed {
            let fresh = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("example-{file}"));
            std::fs::write(&fresh, &rendered).unwrap();
            stale.push(format!("{file} (as rendered now: {})", fresh.display()));
        }
    }
    assert!(
        stale.is_empty(),
        "reports/example is stale: {stale:?}; regenerate it as the README's battery section says \
         (`cargo run --release -- report show reports/example --format md --out reports/example/report.md`, \
         and the same with html)"
    );
    // Rendering twice gives the same bytes (no clock, no unordered map).
    let again = report::render(&l.doc, &l.dir, Format::Html).unwrap();
    assert_eq!(again, report::render(&l.doc, &l.dir, Format::Html).unwrap());
}

/// (x, y, text) of every `<text>` of an SVG.
fn texts(svg: &roxmltree::Document) -> Vec<(f64, f64, String)> {
    svg.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            let num = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
            (
                num("x"),
                num("y"),
                n.text().unwrap_or("").trim().to_string(),
            )
        })
        .collect()
}

/// The x of the bottom axis's tick labelled `label` (the lowest text saying it: value
/// labels beside the bars say the same things higher up).
fn tick(texts: &[(f64, f64, String)], label: &str) -> f64 {
    texts
        .iter()
        .filter(|t| t.2 == label)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or_else(|| panic!("no tick `{label}`: {texts:?}"))
        .0
}

fn rects(svg: &roxmltree::Document, fill: &str) -> Vec<(f64, f64, f64)> {
    let mut out: Vec<(f64, f64, f64)> = svg
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(fill))
        .map(|n| {
            let num = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
            (num("x"), num("y"), num("width"))
        })
        .collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

#[test]
fn the_accuracy_bars_and_contribution_markers_are_the_figures_in_results_json() {
    let doc: ResultsDoc = load(&example()).doc;
    let rows = model::class_rows(&doc);
    let svg = charts::accuracy(&doc, &rows).unwrap();
    let svg = roxmltree::Document::parse(&svg).unwrap();
    let t = texts(&svg);
    let (zero, hundred) = (tick(&t, "0%"), tick(&t, "100%"));
    let px = hundred - zero;
    for (fill, want) in [
        (
            hex(charts::BASELINE),
            rows.iter().map(|r| r.baseline_accuracy).collect::<Vec<_>>(),
        ),
        (
            hex(charts::INVESTIGATOR),
            rows.iter().map(|r| r.investigator_accuracy).collect(),
        ),
    ] {
        let bars = rects(&svg, &fill);
        assert_eq!(bars.len(), rows.len(), "one {fill} bar per row");
        for ((x, _, width), (row, acc)) in bars.iter().zip(rows.iter().zip(&want)) {
            let acc = acc.unwrap();
            assert!((x - zero).abs() <= 1.0, "{}: bar starts at {x}", row.class);
            assert!(
                (width / px - acc).abs() <= 1.5 / px,
                "{}: {fill} bar is {:.3} of the axis, results.json says {acc}",
                row.class,
                width / px
            );
        }
    }
    // The contribution markers (hollow or filled circles) sit at each estimate.
    let (minus, plus) = (tick(&t, "-100"), tick(&t, "+100"));
    let mut markers: Vec<(f64, f64)> = svg
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .map(|n| {
            let num = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
            (num("cy"), num("cx"))
        })
        .collect();
    markers.sort_by(|a, b| a.0.total_cmp(&b.0));
    let estimates: Vec<f64> = doc
        .classes
        .iter()
        .chain(std::iter::once(&doc.overall))
        .filter_map(|c| c.contribution.as_ref().map(|k| k.estimate))
        .collect();
    assert_eq!(markers.len(), estimates.len());
    for ((_, cx), est) in markers.iter().zip(&estimates) {
        let got = (cx - minus) / (plus - minus) * 2.0 - 1.0;
        assert!(
            (got - est).abs() <= 2.0 / (plus - minus),
            "marker at {got:.3}, estimate {est}"
        );
    }
}

#[test]
fn junit_has_a_testcase_per_trial_and_failures_carry_expected_and_got() {
    let l = load(&fixture("heuristic"));
    let xml = report::render(&l.doc, &l.dir, Format::Junit).unwrap();
    let parsed = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<roxmltree::Node> = parsed
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), l.doc.trials.len());
    let suites = parsed
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .count();
    assert_eq!(suites, l.doc.classes.len());
    for (case, t) in cases.iter().zip(&l.doc.trials) {
        assert_eq!(case.attribute("name"), Some(t.id.as_str()));
        assert_eq!(case.attribute("classname"), Some(t.class.as_str()));
        let failure = case.children().find(|n| n.has_tag_name("failure"));
        assert_eq!(failure.is_some(), !model::passed(t), "{}", t.id);
        if let Some(f) = failure
            && f.attribute("type") == Some("wrong")
        {
            let message = f.attribute("message").unwrap();
            let expected = t.expected_status.as_deref().unwrap();
            let got = t.status.as_deref().unwrap_or("no result");
            assert!(
                message.ends_with(&format!("expected {expected}, got {got}")),
                "{message}"
            );
            assert!(f.text().unwrap().contains("expected: {"), "{:?}", f.text());
        }
    }
}

#[test]
fn html_escapes_what_results_json_says_and_says_when_a_run_is_not_kept() {
    let mut l = load(&fixture("heuristic"));
    l.doc.trials[0].reason = Some("<script>alert(1)</script> & \"quotes\"".into());
    let html = report::render(&l.doc, &l.dir, Format::Html).unwrap();
    assert!(!html.contains("<script>alert(1)"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt; &amp; &quot;quotes&quot;"));
    assert!(html.contains("the case run was not kept"));
    // Self-contained: no external reference of any kind.
    for needle in ["http://", "https://", "src=\"", "@import"] {
        let outside_svg_ns = html.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !outside_svg_ns.contains(needle),
            "report.html holds `{needle}`"
        );
    }
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn report_cli_renders_every_format_and_refuses_incomparable_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture("heuristic");
    let dir = dir.to_str().unwrap();
    for format in ["md", "html", "json", "junit"] {
        let out = tmp.path().join(format!("report.{format}"));
        let o = cli(&[
            "report",
            "show",
            dir,
            "--format",
            format,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{format}: {o:?}");
        assert!(std::fs::metadata(&out).unwrap().len() > 500, "{format}");
    }
    let o = cli(&["report", "show", &format!("{dir}/results.json")]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("## Battery: heuristic vs baseline"));

    let oracle = fixture("oracle");
    for format in ["md", "html", "json"] {
        let o = cli(&[
            "report",
            "diff",
            dir,
            oracle.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert!(o.status.success(), "{format}: {o:?}");
        assert!(
            String::from_utf8_lossy(&o.stdout)
                .replace("&#x2f;", "/")
                .contains("conflicting/billing-address"),
            "{format} names a flipped scenario"
        );
    }
    let other = with_manifest(tmp.path(), "labelSeal", "sha256:2222");
    let o = cli(&["report", "diff", dir, other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`labelSeal`") && err.contains("--force"),
        "{err}"
    );
    let o = cli(&["report", "diff", dir, other.to_str().unwrap(), "--force"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("compared anyway"));
    let o = cli(&[
        "report",
        "show",
        tmp.path().join("nowhere").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
}

/// Regression: `--out` was checked only to be a regular file or a new path, so a report
/// could replace the results it was read from (results.json, a trial record a resume
/// reads). A record of any results directory read is refused; a report beside them is
/// not.
#[test]
fn report_out_never_replaces_a_record_of_the_results_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(dir.join("trials")).unwrap();
    let results = std::fs::read(fixture("heuristic").join("results.json")).unwrap();
    std::fs::write(dir.join("results.json"), &results).unwrap();
    let d = dir.to_str().unwrap();
    let other = fixture("oracle");
    let other = other.to_str().unwrap();
    let refused = [
        (vec!["report", "show", d], dir.join("results.json")),
        (vec!["report", "show", d], dir.join("trials/a.json")),
        (vec!["report", "show", d], dir.join("runs/x/close.json")),
        (vec!["report", "diff", other, d], dir.join("manifest.json")),
        // Spelled through `..`: compared resolved.
        (
            vec!["report", "show", d],
            dir.join("trials/../results.json"),
        ),
    ];
    for (args, out) in refused {
        let out = out.to_str().unwrap();
        let o = cli(&[&args[..], &["--out", out]].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} --out {out}: {stderr}");
        assert!(
            stderr.contains("record of the results directory") && stderr.contains(out),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read(dir.join("results.json")).unwrap(), results);
    assert!(!dir.join("trials/a.json").exists() && !dir.join("manifest.json").exists());
    let beside = dir.join("report.md");
    let o = cli(&["report", "show", d, "--out", beside.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Regression: an infrastructure failure carries the agent's last stderr lines, and they
/// reached report.md and the terminal with their escape sequences acting, and the JUnit
/// file with characters XML 1.0 refuses (not well-formed). Each is replaced by U+FFFD.
#[test]
fn agent_control_characters_are_neither_acted_on_nor_break_the_junit_xml() {
    let mut l = load(&fixture("heuristic"));
    let hostile = "bad\u{1}\u{8}\u{1b}[31mred\u{7f}\u{9b}2J </failure> ]]> \u{ffff}";
    for t in &mut l.doc.trials {
        t.reason = Some(hostile.into());
    }
    l.doc.trials[0].infra = Some(anvil_bench::battery::trial_record::Infra {
        error: hostile.into(),
        attempts: 2,
    });
    let xml = report::render(&l.doc, &l.dir, Format::Junit).unwrap();
    roxmltree::Document::parse(&xml).expect("the JUnit view is well-formed XML");
    let md = report::render(&l.doc, &l.dir, Format::Markdown).unwrap();
    for text in [&xml, &md] {
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
                && !text.contains('\u{ffff}'),
            "a control character survived"
        );
    }
    assert!(
        md.contains("\u{fffd}[31mred"),
        "the escape was not replaced"
    );
}

/// Regression: a report rendered the summaries results.json stored, so figures edited to
/// contradict its trials (an accuracy of 99.9%, a count no trial gives) were shown as the
/// battery's. Every derived figure must recompute from the trials and the seed (R-BAT-14);
/// one that does not is refused, naming it.
#[test]
fn a_report_refuses_figures_that_do_not_recompute_from_the_trials() {
    let tmp = tempfile::tempdir().unwrap();
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("heuristic").join("results.json")).unwrap())
            .unwrap();
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 3] = [
        ("classes", |v| {
            v["classes"][0]["arms"]["heuristic"]["accuracy"] = serde_json::json!(0.999);
        }),
        ("overall", |v| v["overall"]["n"] = serde_json::json!(7)),
        ("controls", |v| {
            let controls = v["controls"].as_object_mut().unwrap();
            let (key, _) = controls.iter().next().unwrap();
            let key = key.clone();
            controls.remove(&key);
        }),
    ];
    for (field, edit) in edits {
        let dir = tmp.path().join(field);
        std::fs::create_dir_all(&dir).unwrap();
        let mut v = original.clone();
        edit(&mut v);
        assert_ne!(v, original, "fixture: the {field} edit changed nothing");
        std::fs::write(dir.join("results.json"), serde_json::to_vec(&v).unwrap()).unwrap();
        let o = cli(&["report", "show", dir.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{field}: {stderr}");
        assert!(
            stderr.contains(&format!("`{field}`")) && stderr.contains("R-BAT-14"),
            "{field}: {stderr}"
        );
        assert!(
            o.stdout.is_empty(),
            "a report was rendered from edited figures"
        );
    }
}
