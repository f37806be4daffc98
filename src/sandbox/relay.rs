//! The rail relay: how an agent inside the sandbox calls the rails while the run root stays
//! read-only to it.
//!
//! Inside the sandbox `ANVIL_BENCH_RAIL_SOCKET` names a Unix socket; `anvil-bench case …`
//! then sends its arguments and working directory there ([`call`]) instead of running. The
//! engine ([`RailServer`]) checks that the command is one of the agent's rails and runs it
//! in a rail sandbox of its own: the same system view, the repository and the rails' inputs
//! read-only, the run directory writable, no network, the labels not mounted. The rail's
//! output and exit status go back to the caller verbatim ([`RelayOutcome::Exited`]); a
//! request the relay refuses, or a rail it could not run to an exit status, comes back as
//! such, and the caller's CLI decides the exit code.
//!
//! Invariant: nothing the agent runs gets a writable run root. Only engine code (a relayed
//! rail) ever runs where the run root is writable, and only a rail on [`RELAYED_RAILS`];
//! any path a rail argument names is resolved in the rail sandbox, so it cannot reach
//! anything the agent's sandbox does not show, apart from the run root itself.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The variable naming the relay socket inside the sandbox.
pub const RAIL_SOCKET_ENV: &str = "ANVIL_BENCH_RAIL_SOCKET";
/// The socket's file name in the bridge directory.
pub const RAIL_SOCKET_NAME: &str = "rails.sock";
/// The `case` subcommands an agent may call from inside the sandbox. `open` and `close`
/// (which can write the AIR) are the engine's.
pub const RELAYED_RAILS: &[&str] = &[
    "add-evidence",
    "add-external-evidence",
    "add-claim",
    "freeze-research",
    "validate",
    "finalize",
    "show",
    "verify",
    "query",
];
/// A relayed rail that runs longer than this is killed.
const RAIL_TIMEOUT: Duration = Duration::from_mins(2);
/// Largest request accepted from inside.
const MAX_REQUEST: u64 = 1024 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RailRequest {
    /// The arguments after the program name, starting with `case`.
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// The caller's standard input, relayed when an argument is `-` (read from stdin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RailReply {
    pub outcome: RelayOutcome,
    pub stdout: String,
    pub stderr: String,
}

/// How a relayed call ended. Only [`RelayOutcome::Exited`] carries a number: the relayed
/// CLI's own exit status, as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum RelayOutcome {
    /// The rail ran and exited with this status.
    Exited(u8),
    /// The relay refused the request: malformed, not one of [`RELAYED_RAILS`], or a
    /// relative working directory.
    Refused,
    /// The engine could not run the rail to an exit status: it did not start, was killed
    /// by a signal, or ran past its timeout.
    Failed,
}

impl RelayOutcome {
    /// The rail ran and exited successfully (status 0).
    #[must_use]
    pub fn succeeded(self) -> bool {
        self == RelayOutcome::Exited(0)
    }
}

impl std::fmt::Display for RelayOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RelayOutcome::Exited(code) => write!(f, "exited {code}"),
            RelayOutcome::Refused => f.write_str("was refused by the relay"),
            RelayOutcome::Failed => f.write_str("could not be run to an exit status"),
        }
    }
}

/// Inside the sandbox: sends one rail call to the engine and waits for its reply. When an
/// argument is `-`, the rail reads its input from stdin, so stdin goes along (bounded: the
/// whole request must stay under the relay's limit).
///
/// # Errors
///
/// `InvalidInput` when an argument is `-` and stdin is over the relay's limit,
/// `InvalidData` when that stdin is not UTF-8; the I/O error connecting to `socket`,
/// sending the request or reading the reply; and an error when the reply is not a
/// [`RailReply`].
pub fn call(socket: &Path, args: &[String], cwd: &Path) -> io::Result<RailReply> {
    call_with_stdin(socket, args, cwd, io::stdin())
}

/// [`call`], with the caller's standard input read from `stdin`.
fn call_with_stdin(
    socket: &Path,
    args: &[String],
    cwd: &Path,
    stdin: impl Read,
) -> io::Result<RailReply> {
    let stdin = if args.iter().any(|a| a == "-") {
        let mut buf = Vec::new();
        stdin.take(MAX_REQUEST + 1).read_to_end(&mut buf)?;
        if buf.len() as u64 > MAX_REQUEST {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("stdin is over the relay's limit of {MAX_REQUEST} bytes"),
            ));
        }
        Some(
            String::from_utf8(buf)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stdin is not UTF-8"))?,
        )
    } else {
        None
    };
    let mut stream = UnixStream::connect(socket)?;
    let request = RailRequest {
        args: args.to_vec(),
        cwd: cwd.to_path_buf(),
        stdin,
    };
    let mut line = serde_json::to_string(&request).map_err(io::Error::other)?;
    line.push('\n');
    stream.write_all(line.as_bytes())?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    serde_json::from_str(&reply).map_err(io::Error::other)
}

/// The engine side: runs relayed rails in the rail sandbox.
#[derive(Debug, Clone)]
pub struct RailServer {
    /// The bwrap program (absolute).
    pub bwrap: PathBuf,
    /// bwrap arguments for the rail sandbox, up to (not including) `--chdir`.
    pub sandbox_args: Vec<String>,
    /// The anvil-bench binary as seen inside the rail sandbox.
    pub program: String,
    /// The environment the rail runs with.
    pub env: Vec<(String, String)>,
}

impl RailServer {
    /// Serves one connection: reads a request, answers it, closes.
    pub fn serve(&self, mut stream: UnixStream) {
        let reply = match read_request(&stream) {
            Ok(request) => self.answer(&request),
            Err(e) => refusal(&format!("malformed rail request: {e}")),
        };
        if let Ok(text) = serde_json::to_string(&reply) {
            let _ = stream.write_all(text.as_bytes());
        }
    }

    /// Checks and runs one request.
    pub fn answer(&self, request: &RailRequest) -> RailReply {
        let rail = request.args.get(1).map_or("", String::as_str);
        let help = |a: &str| matches!(a, "-h" | "--help" | "help");
        let allowed = request.args.first().map(String::as_str) == Some("case")
            && (RELAYED_RAILS.contains(&rail) || help(rail));
        if !allowed {
            return refusal(&format!(
                "`anvil-bench {}` is not available inside the sandbox; the agent may call \
                 only the rails: {}",
                request.args.join(" "),
                RELAYED_RAILS.join(", ")
            ));
        }
        if !request.cwd.is_absolute() {
            return refusal("the working directory of a rail call must be absolute");
        }
        let mut command = Command::new(&self.bwrap);
        command
            .args(&self.sandbox_args)
            .arg("--chdir")
            .arg(&request.cwd)
            .arg("--")
            .arg(&self.program)
            .args(&request.args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if request.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match run_with_timeout(command, request.stdin.clone(), RAIL_TIMEOUT) {
            Ok(reply) => reply,
            Err(e) => RailReply {
                outcome: RelayOutcome::Failed,
                stdout: String::new(),
                stderr: format!("error: the engine could not run the rail: {e}\n"),
            },
        }
    }
}

fn refusal(message: &str) -> RailReply {
    RailReply {
        outcome: RelayOutcome::Refused,
        stdout: String::new(),
        stderr: format!("error: {message}\n"),
    }
}

fn read_request(stream: &UnixStream) -> io::Result<RailRequest> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut line = String::new();
    BufReader::new(stream.take(MAX_REQUEST)).read_line(&mut line)?;
    serde_json::from_str(&line).map_err(io::Error::other)
}

/// Runs `command` to its end, or kills it once it has run longer than `timeout`.
fn run_with_timeout(
    mut command: Command,
    input: Option<String>,
    timeout: Duration,
) -> io::Result<RailReply> {
    let mut child = command.spawn()?;
    if let (Some(input), Some(mut pipe)) = (input, child.stdin.take()) {
        // Written from a thread so a rail that does not read cannot block the relay.
        std::thread::spawn(move || {
            let _ = pipe.write_all(input.as_bytes());
        });
    }
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut out);
            }
            String::from_utf8_lossy(&out).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = stdout.join().unwrap_or_default();
    let mut stderr = stderr.join().unwrap_or_default();
    let outcome = if let Some(status) = status {
        status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .map_or(RelayOutcome::Failed, RelayOutcome::Exited)
    } else {
        // Writing to a String cannot fail.
        let _ = writeln!(
            stderr,
            "error: the rail ran longer than {}s and was killed",
            timeout.as_secs_f64()
        );
        RelayOutcome::Failed
    };
    Ok(RailReply {
        outcome,
        stdout,
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;

    use super::*;

    /// A relay whose "bwrap" drops the sandbox arguments and runs the program, and whose
    /// program prints its arguments, whether its stdin is a pipe, any stdin given after a
    /// `-`, and exits 3. Both are shell scripts read by `/bin/sh`, never executed files: a
    /// file this process just wrote can still be open for writing in a child another test
    /// thread is forking, and executing it then fails with "text file busy".
    fn relay(dir: &Path) -> RailServer {
        let script = |name: &str, body: &str| {
            let path = dir.join(name);
            std::fs::write(&path, body).unwrap();
            path.display().to_string()
        };
        let bwrap = script(
            "bwrap",
            "while [ \"$1\" != -- ]; do shift; done\nshift\nexec /bin/sh \"$@\"\n",
        );
        let program = script(
            "anvil",
            "echo \"args:$*\"\nif [ -p /dev/stdin ]; then echo stdin:pipe; else echo stdin:none; fi\n\
             for a in \"$@\"; do [ \"$a\" = - ] && cat; done\necho oops >&2\nexit 3\n",
        );
        RailServer {
            bwrap: PathBuf::from("/bin/sh"),
            sandbox_args: vec![bwrap, "--die-with-parent".into()],
            program,
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        }
    }

    fn request(args: &[&str], cwd: &Path, stdin: Option<&str>) -> RailRequest {
        RailRequest {
            args: args.iter().map(|a| (*a).to_string()).collect(),
            cwd: cwd.to_path_buf(),
            stdin: stdin.map(str::to_string),
        }
    }

    /// Only `case` and one of the agent's rails (or help) is run; the rail's output and
    /// exit status come back verbatim, its stdin only when given.
    #[test]
    fn only_the_agents_rails_are_run_and_their_output_comes_back_verbatim() {
        let tmp = tempfile::tempdir().unwrap();
        let server = relay(tmp.path());
        let reply = server.answer(&request(&["case", "show", "RUN"], tmp.path(), None));
        assert_eq!(reply.outcome, RelayOutcome::Exited(3));
        assert_eq!(reply.stdout, "args:case show RUN\nstdin:none\n");
        assert_eq!(reply.stderr, "oops\n");
        let piped = server.answer(&request(
            &["case", "add-claim", "-"],
            tmp.path(),
            Some("{}"),
        ));
        assert_eq!(piped.stdout, "args:case add-claim -\nstdin:pipe\n{}");
        for rail in RELAYED_RAILS.iter().chain(&["--help", "-h", "help"]) {
            let reply = server.answer(&request(&["case", rail], tmp.path(), None));
            assert_eq!(reply.outcome, RelayOutcome::Exited(3), "{rail}");
        }
        for refused in [
            &["case", "open"][..],
            &["case", "close"],
            &["case"],
            &["battery", "show"],
            &["scenarios", "show"],
            &[],
        ] {
            let reply = server.answer(&request(refused, tmp.path(), None));
            assert_eq!(reply.outcome, RelayOutcome::Refused, "{refused:?}");
            assert!(reply.stdout.is_empty() && reply.stderr.starts_with("error: "));
        }
        let relative = server.answer(&request(&["case", "show"], Path::new("rel"), None));
        assert_eq!(relative.outcome, RelayOutcome::Refused);
        assert!(relative.stderr.contains("absolute"), "{}", relative.stderr);
        let mut broken = server.clone();
        broken.bwrap = tmp.path().join("missing");
        let failed = broken.answer(&request(&["case", "show"], tmp.path(), None));
        assert_eq!(failed.outcome, RelayOutcome::Failed);
    }

    /// A rail that outlives its time is killed, and says so; one that ends in time is not.
    #[test]
    fn a_rail_past_its_time_is_killed() {
        let run = |script: &str| {
            let mut command = Command::new("/bin/sh");
            command
                .args(["-c", script])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(run_with_timeout(command, None, Duration::from_millis(300)));
            });
            // Bounded, so a relay that never kills fails here instead of hanging the test.
            rx.recv_timeout(Duration::from_secs(30))
                .expect("the relay neither finished nor killed the rail")
                .unwrap()
        };
        let hung = run("exec sleep 20");
        assert_eq!(hung.outcome, RelayOutcome::Failed);
        assert!(
            hung.stderr.contains("ran longer than 0.3s and was killed"),
            "{}",
            hung.stderr
        );
        let quick = run("echo done");
        assert_eq!(quick.outcome, RelayOutcome::Exited(0));
        assert_eq!(quick.stdout, "done\n");
    }

    #[test]
    fn only_exit_status_zero_succeeded() {
        assert!(RelayOutcome::Exited(0).succeeded());
        for other in [
            RelayOutcome::Exited(1),
            RelayOutcome::Refused,
            RelayOutcome::Failed,
        ] {
            assert!(!other.succeeded(), "{other:?}");
        }
    }

    /// A call goes over the socket and back: stdin travels only for a `-` argument, and a
    /// request as large as the limit allows (a 512 KiB stdin) is read whole.
    #[test]
    fn a_call_round_trips_over_the_socket() {
        let tmp = tempfile::tempdir().unwrap();
        let server = relay(tmp.path());
        let socket = tmp.path().join("rails.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let serving = std::thread::spawn(move || {
            for stream in listener.incoming().take(3) {
                server.serve(stream.unwrap());
            }
        });
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        let cwd = tmp.path();
        let plain =
            call_with_stdin(&socket, &args(&["case", "show"]), cwd, &b"unread"[..]).unwrap();
        assert_eq!(
            (plain.outcome, plain.stdout.as_str()),
            (RelayOutcome::Exited(3), "args:case show\nstdin:none\n")
        );
        let big = "x".repeat(512 * 1024);
        let piped = call_with_stdin(
            &socket,
            &args(&["case", "add-claim", "-"]),
            cwd,
            big.as_bytes(),
        )
        .unwrap();
        assert_eq!(piped.outcome, RelayOutcome::Exited(3));
        assert!(piped.stdout.ends_with(&big), "{} bytes", piped.stdout.len());
        // A malformed request is refused, not run.
        let mut raw = UnixStream::connect(&socket).unwrap();
        raw.write_all(b"not json\n").unwrap();
        raw.shutdown(std::net::Shutdown::Write).unwrap();
        let mut reply = String::new();
        raw.read_to_string(&mut reply).unwrap();
        let reply: RailReply = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply.outcome, RelayOutcome::Refused);
        serving.join().unwrap();
    }

    /// Stdin over the limit is refused before anything is sent; at the limit it is sent.
    #[test]
    fn stdin_over_the_relay_limit_is_refused_before_connecting() {
        let tmp = tempfile::tempdir().unwrap();
        let nowhere = tmp.path().join("no.sock");
        let args = ["case".to_string(), "add-claim".into(), "-".into()];
        let limit = usize::try_from(MAX_REQUEST).unwrap();
        let over = vec![b'x'; limit + 1];
        let err = call_with_stdin(&nowhere, &args, tmp.path(), &over[..]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        let at = vec![b'x'; limit];
        let err = call_with_stdin(&nowhere, &args, tmp.path(), &at[..]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
        let bad = call_with_stdin(&nowhere, &args, tmp.path(), &[0xff, 0xfe][..]).unwrap_err();
        assert_eq!(bad.kind(), io::ErrorKind::InvalidData, "{bad}");
    }
}
