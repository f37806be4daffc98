//! report.html in a real browser: a small real battery writes it, headless Chromium opens it
//! from disk, and the test fails on any console error, uncaught exception or failed request;
//! it checks the DOM holds the per-class table, both SVG charts and a trial's drill-down
//! (with its evidence excerpt and claims), and saves screenshots (light and dark) under
//! `target/tmp/report-browser/`.
//!
//! Chromium is driven over the `DevTools` protocol on a loopback websocket (tungstenite, no
//! browser-automation crate): `--dump-dom` alone cannot see failed requests or console
//! errors reliably, and the protocol gives both as events. Without Chromium the test fails
//! when CI=true (.ci/run installs the Debian package) and otherwise prints why it skipped.

mod common;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

const BROWSERS: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

fn browser_or_skip() -> Option<PathBuf> {
    if let Some(p) = BROWSERS.iter().find_map(|b| common::find_on_path(b)) {
        return Some(p);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "Chromium is not on PATH ({BROWSERS:?}): .ci/run installs it (apt-get install chromium)"
    );
    eprintln!(
        "skipped: no Chromium on PATH ({BROWSERS:?}); `apt-get install chromium` to run this test"
    );
    None
}

/// Kills the browser (its whole process group) when the test ends, however it ends.
struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: signalling the process group this test created for the browser.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

fn launch(program: &Path) -> (Browser, String) {
    use std::os::unix::process::CommandExt;
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(program)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Keep draining stderr so the browser never blocks on it.
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let browser = Browser {
        child,
        _profile: profile,
    };
    let url = rx
        .recv_timeout(Duration::from_mins(1))
        .expect("Chromium did not print its DevTools address within 60 s");
    (browser, url)
}

/// A DevTools-protocol client on one page session.
struct Cdp {
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next: u64,
    session: Option<String>,
    events: Vec<Value>,
}

impl Cdp {
    fn connect(url: &str) -> Cdp {
        let (mut ws, _) = tungstenite::connect(url).unwrap();
        if let MaybeTlsStream::Plain(s) = ws.get_mut() {
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
        }
        Cdp {
            ws,
            next: 0,
            session: None,
            events: Vec::new(),
        }
    }

    /// The next message, or `None` after a read timeout.
    fn read(&mut self) -> Option<Value> {
        match self.ws.read() {
            Ok(Message::Text(t)) => Some(serde_json::from_str(t.as_str()).unwrap()),
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("the DevTools connection failed: {e}"),
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        let deadline = Instant::now() + Duration::from_mins(1);
        while Instant::now() < deadline {
            let Some(v) = self.read() else { continue };
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(e) = v.get("error") {
                    panic!("{method} failed: {e}");
                }
                return v["result"].clone();
            }
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
        panic!("{method}: no answer within 60 s");
    }

    /// Waits for an event of `method` (already received or still to come).
    fn wait_for(&mut self, method: &str) {
        let seen = |events: &[Value]| events.iter().any(|e| e["method"] == method);
        let deadline = Instant::now() + Duration::from_mins(1);
        while !seen(&self.events) {
            assert!(Instant::now() < deadline, "no {method} within 60 s");
            if let Some(v) = self.read()
                && v.get("method").is_some()
            {
                self.events.push(v);
            }
        }
    }

    /// Reads events for `d` (late console messages, requests).
    fn settle(&mut self, d: Duration) {
        let until = Instant::now() + d;
        while Instant::now() < until {
            if let Some(v) = self.read()
                && v.get("method").is_some()
            {
                self.events.push(v);
            }
        }
    }

    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "`{expression}` threw: {r}"
        );
        r["result"]["value"].clone()
    }

    fn screenshot(&mut self, file: &Path) {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64_decode(r["data"].as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::write(file, png).unwrap();
    }

    /// Console errors, uncaught exceptions, log errors and failed requests seen so far.
    fn problems(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| {
                let p = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.consoleAPICalled"
                        if matches!(p["type"].as_str(), Some("error" | "assert")) =>
                    {
                        Some(format!("console.{}: {}", p["type"], p["args"]))
                    }
                    "Runtime.exceptionThrown" => Some(format!(
                        "uncaught: {}",
                        p["exceptionDetails"]["exception"]["description"]
                    )),
                    "Log.entryAdded" if p["entry"]["level"] == "error" => {
                        Some(format!("log error: {}", p["entry"]["text"]))
                    }
                    "Network.loadingFailed" => Some(format!(
                        "request failed: {} ({})",
                        p["requestId"], p["errorText"]
                    )),
                    "Network.responseReceived"
                        if p["response"]["status"].as_u64().is_some_and(|s| s >= 400) =>
                    {
                        Some(format!(
                            "HTTP {} for {}",
                            p["response"]["status"], p["response"]["url"]
                        ))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// Every request the page made.
    fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_string))
            .collect()
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let v: Vec<u32> = chunk.iter().map(|&c| u32::from(value(c))).collect();
        let n = v.iter().fold(0u32, |acc, x| (acc << 6) | x) << (6 * (4 - v.len()));
        let take = v.len() - 1;
        out.extend_from_slice(&n.to_be_bytes()[1..=take]);
    }
    out
}

/// A small real battery: two scenarios, every arm and both controls, its report.html
/// written by the battery itself (with the kept runs behind the drill-downs).
fn small_battery(dir: &Path) -> PathBuf {
    let out = dir.join("out");
    let status = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args([
            "battery",
            "--scenario",
            "documented/checkout-timeout",
            "--scenario",
            "conflicting/billing-address",
            "--jobs",
            "2",
            "--out",
        ])
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the battery failed: {status}");
    out
}

#[test]
fn report_html_opens_from_disk_in_chromium_without_errors_and_shows_charts_and_drilldowns() {
    let Some(program) = browser_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = small_battery(tmp.path());
    let html = out.join("report.html");
    assert!(html.is_file(), "the battery wrote no report.html");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let classes = doc["classes"].as_array().unwrap().len();
    let trial = doc["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["arm"] == "heuristic" && t["scenario"] == "documented/checkout-timeout")
        .unwrap();
    let stem = trial["run"].as_str().unwrap().trim_start_matches("runs/");
    let anchor = format!("t-{stem}");

    let (_browser, url) = launch(&program);
    let mut cdp = Cdp::connect(&url);
    let page = cdp.call("Target.createTarget", json!({"url": "about:blank"}));
    let attached = cdp.call(
        "Target.attachToTarget",
        json!({"targetId": page["targetId"], "flatten": true}),
    );
    cdp.session = attached["sessionId"].as_str().map(str::to_string);
    for domain in [
        "Runtime.enable",
        "Log.enable",
        "Network.enable",
        "Page.enable",
    ] {
        cdp.call(domain, json!({}));
    }
    cdp.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": false}),
    );
    let file_url = format!("file://{}", html.display());
    cdp.call("Page.navigate", json!({"url": file_url}));
    cdp.wait_for("Page.loadEventFired");
    cdp.settle(Duration::from_millis(500));

    // The per-class table: every class and the overall row.
    let rows = cdp.eval("document.querySelectorAll('#class-table tbody tr').length");
    assert_eq!(rows, json!(classes + 1), "per-class table rows");
    // Both charts, as inline SVG with bars.
    let charts = cdp.eval(
        "[document.querySelectorAll('#chart-accuracy svg rect').length, \
          document.querySelectorAll('#chart-cost svg circle').length]",
    );
    assert!(
        charts[0].as_u64().unwrap() >= 2 * classes as u64,
        "accuracy bars: {charts}"
    );
    assert!(charts[1].as_u64().unwrap() >= 1, "cost points: {charts}");
    // The optional script ran (the filter controls appear only with it) and sorts.
    let sorted = cdp.eval(
        "document.getElementById('trial-controls').hidden === false && \
         (document.querySelector('#trial-table th[data-sort]').click(), \
          document.querySelector('#trial-table th[data-sort]').getAttribute('aria-sort'))",
    );
    assert_eq!(sorted, json!("ascending"));
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&shots).unwrap();
    cdp.screenshot(&shots.join("top-light.png"));
    cdp.eval("document.getElementById('charts').scrollIntoView(), true");
    cdp.screenshot(&shots.join("charts-light.png"));

    // A trial's drill-down: shown when its row's link is followed, with the label beside
    // the proposal, the evidence excerpt with its lines, the claims and the transcript.
    let link = cdp.eval(&format!(
        "(function () {{ var a = document.querySelector('#trial-table a[href=\"#{anchor}\"]'); \
           a.click(); return a.getAttribute('href'); }})()"
    ));
    assert_eq!(link, json!(format!("#{anchor}")));
    cdp.settle(Duration::from_millis(300));
    let drill = cdp.eval(&format!(
        "(function () {{ var d = document.getElementById('{anchor}'); return {{ \
           shown: getComputedStyle(d).display !== 'none', \
           label: !!d.querySelector('.sbs .label'), proposal: !!d.querySelector('.sbs .proposal'), \
           lines: d.querySelectorAll('.excerpt .line').length, \
           claims: d.querySelectorAll('table.claims tbody tr').length, \
           transcript: !!d.querySelector('details.transcript') }}; }})()"
    ));
    assert_eq!(drill["shown"], json!(true), "drill-down not shown: {drill}");
    assert_eq!(drill["label"], json!(true), "{drill}");
    assert_eq!(drill["proposal"], json!(true), "{drill}");
    assert!(
        drill["lines"].as_u64().unwrap() > 0,
        "no excerpt lines: {drill}"
    );
    assert!(drill["claims"].as_u64().unwrap() > 0, "no claims: {drill}");
    assert_eq!(drill["transcript"], json!(true), "{drill}");
    cdp.screenshot(&shots.join("drill-light.png"));

    cdp.call(
        "Emulation.setEmulatedMedia",
        json!({"features": [{"name": "prefers-color-scheme", "value": "dark"}]}),
    );
    cdp.settle(Duration::from_millis(200));
    cdp.screenshot(&shots.join("drill-dark.png"));
    cdp.eval("window.scrollTo(0, 0), true");
    cdp.screenshot(&shots.join("top-dark.png"));
    cdp.eval("document.getElementById('charts').scrollIntoView(), true");
    cdp.screenshot(&shots.join("charts-dark.png"));

    cdp.settle(Duration::from_millis(200));
    let problems = cdp.problems();
    assert!(problems.is_empty(), "the page had problems: {problems:#?}");
    // Self-contained: the page requested nothing but itself.
    let requests = cdp.requests();
    assert!(
        requests.iter().all(|r| r.starts_with(&file_url)),
        "requests besides the page: {requests:#?}"
    );
    eprintln!("screenshots: {}", shots.display());
}
