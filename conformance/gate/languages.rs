//! R-GATE-1 per language family: the idioms each language states a unit with attest the
//! right value and not a wrong one, on code written the way that language is written.

use libtest_mimic::Failed;

use super::right_and_wrong;
use crate::Check;

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "gate::python_idioms_attest_the_right_unit_and_not_a_wrong_one",
            rules: &["R-GATE-1"],
            run: python,
        },
        Check {
            name: "gate::typescript_idioms_attest_the_right_unit_and_not_a_wrong_one",
            rules: &["R-GATE-1"],
            run: typescript,
        },
        Check {
            name: "gate::go_idioms_attest_the_right_unit_and_not_a_wrong_one",
            rules: &["R-GATE-1"],
            run: go,
        },
        Check {
            name: "gate::java_and_kotlin_idioms_attest_the_right_unit_and_not_a_wrong_one",
            rules: &["R-GATE-1"],
            run: java_kotlin,
        },
        Check {
            name: "gate::rust_idioms_attest_the_right_unit_and_not_a_wrong_one",
            rules: &["R-GATE-1"],
            run: rust,
        },
    ]
}

/// `timedelta(minutes=…)` on a name the field flows into, and a test binding a literal.
fn python() -> Result<(), Failed> {
    let code = "\
def void_deadline(request, now):
    window = request.capture_timeout or DEFAULT_WINDOW
    return now + timedelta(minutes=window)
";
    let test = "\
def test_capture_window():
    req = make_request(capture_timeout=15)
    assert void_deadline(req, T0) == T0 + timedelta(minutes=15)
";
    right_and_wrong(
        &[
            ("src/payments/deadline.py", code),
            ("tests/test_deadline.py", test),
        ],
        &[
            ("src/payments/deadline.py", 1, 3),
            ("tests/test_deadline.py", 1, 3),
        ],
        "min",
        "s",
    )
}

/// `setTimeout` and an `…Ms` constant flowing into the field.
fn typescript() -> Result<(), Failed> {
    let code = "\
export function scheduleVoid(body: CreatePayment, gateway: Gateway): void {
  const wait = body.captureTimeout ?? DEFAULT_CAPTURE_WAIT_MS;
  setTimeout(() => gateway.voidAuthorisation(body.id), wait);
}
";
    right_and_wrong(
        &[("src/client/void.ts", code)],
        &[("src/client/void.ts", 1, 4)],
        "ms",
        "s",
    )
}

/// `time.Duration(x) * time.Minute`.
fn go() -> Result<(), Failed> {
    let code = "\
func voidAfter(req CreatePaymentRequest) time.Duration {
\twait := req.CaptureTimeout
\tif wait == 0 {
\t\twait = defaultCaptureWait
\t}
\treturn time.Duration(wait) * time.Minute
}
";
    right_and_wrong(
        &[("internal/payments/void.go", code)],
        &[("internal/payments/void.go", 1, 7)],
        "min",
        "ms",
    )
}

/// `TimeUnit.SECONDS` in Java and `.seconds` in Kotlin.
fn java_kotlin() -> Result<(), Failed> {
    let java = "\
    public void scheduleVoid(CreatePaymentRequest request) {
        scheduler.schedule(() -> gateway.voidAuthorisation(request.id()),
                request.getCaptureTimeout(), TimeUnit.SECONDS);
    }
";
    let kotlin = "\
fun voidDeadline(req: CreatePaymentRequest, now: Instant): Instant =
    now + req.captureTimeout.seconds
";
    right_and_wrong(
        &[
            ("src/main/java/payments/VoidScheduler.java", java),
            ("src/main/kotlin/payments/Deadline.kt", kotlin),
        ],
        &[
            ("src/main/java/payments/VoidScheduler.java", 1, 4),
            ("src/main/kotlin/payments/Deadline.kt", 1, 2),
        ],
        "s",
        "min",
    )
}

/// `Duration::from_millis` and a test asserting on a bound literal.
fn rust() -> Result<(), Failed> {
    let code = "\
impl CreatePayment {
    pub fn capture_window(&self) -> Duration {
        Duration::from_millis(self.capture_timeout)
    }
}
";
    let test = "\
#[test]
fn capture_window_is_the_wire_value() {
    let p = CreatePayment { capture_timeout: 2500, ..Default::default() };
    assert_eq!(p.capture_window(), Duration::from_millis(2500));
}
";
    right_and_wrong(
        &[("src/payments.rs", code), ("tests/capture.rs", test)],
        &[("src/payments.rs", 1, 5), ("tests/capture.rs", 1, 5)],
        "ms",
        "us",
    )
}
