//! The bridge as the sandbox's only network path (R-CON-8): the forward reaches the model
//! endpoint and nothing else on the host; the CONNECT proxy admits its allowlist and refuses
//! and logs the rest.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anvil_bench::process::Stream;
use anvil_bench::sandbox::{Backend, Decision, Endpoint};
use libtest_mimic::Failed;

use super::{Project, bwrap_ready, contained, lines};
use crate::ensure;

/// A loopback HTTP server on the host that answers every request with `body`.
struct HostServer {
    port: u16,
    hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl HostServer {
    fn start(body: &'static str) -> HostServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (hits, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (h, s) = (hits.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                let Ok((mut conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                h.fetch_add(1, Ordering::SeqCst);
                let _ = conn.set_nonblocking(false);
                let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let _ = write!(
                    conn,
                    "HTTP/1.0 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        HostServer { port, hits, stop }
    }
}

impl Drop for HostServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// bash: one HTTP exchange on `127.0.0.1:$1`, writing `$2` as the request, printing the reply.
const EXCHANGE: &str = r#"exchange() { exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1; printf "$2" >&3; cat <&3; echo; exec 3<&-; }"#;

pub(super) fn bwrap_network() -> Result<(), Failed> {
    if !bwrap_ready()? {
        return Ok(());
    }
    let p = Project::new();
    let model = HostServer::start("model says hi");
    let other = HostServer::start("you should not see this");
    // Without an endpoint nothing on the host is reachable, the model included.
    let script = format!(
        r#"{EXCHANGE}
        exchange {model} 'GET / HTTP/1.0\r\n\r\n' && echo "REACHED model port"
        exchange {other} 'GET / HTTP/1.0\r\n\r\n' && echo "REACHED other port"
        true"#,
        model = model.port,
        other = other.port
    );
    let ran = contained(Backend::Bubblewrap, &p.spec("bash", &script), &p.plan())?;
    let out = lines(&ran, Stream::Stdout);
    ensure!(
        out.is_empty()
            && model.hits.load(Ordering::SeqCst) + other.hits.load(Ordering::SeqCst) == 0,
        "host ports were reachable from a sandbox without endpoints: {out:?}"
    );
    ensure!(
        lines(&ran, Stream::Stderr)
            .iter()
            .any(|l| l.contains("Connection refused")),
        "the connections did not fail inside the sandbox: {:?}",
        lines(&ran, Stream::Stderr)
    );

    let mut plan = p.plan();
    plan.endpoints = vec![Endpoint::Forward {
        listen_port: model.port,
        target: format!("127.0.0.1:{}", model.port),
    }];
    let script = format!(
        r#"{EXCHANGE}
        exchange {model} 'GET /v1/messages HTTP/1.0\r\nHost: model\r\n\r\n'
        exchange {other} 'GET / HTTP/1.0\r\n\r\n' && echo "REACHED other port"
        true"#,
        model = model.port,
        other = other.port
    );
    let ran = contained(Backend::Bubblewrap, &p.spec("bash", &script), &plan)?;
    let out = lines(&ran, Stream::Stdout);
    ensure!(
        out.iter().any(|l| l == "model says hi"),
        "the model endpoint was not reached through the bridge: {out:?} {:?}",
        lines(&ran, Stream::Stderr)
    );
    ensure!(
        !out.iter()
            .any(|l| l.contains("should not see") || l.contains("REACHED")),
        "a host port off the bridge was reachable: {out:?}"
    );
    ensure!(
        other.hits.load(Ordering::SeqCst) == 0,
        "the host port off the bridge saw a connection"
    );
    ensure!(
        ran.connections.len() == 1 && ran.connections[0].decision == Decision::Allowed,
        "bridge log: {:?}",
        ran.connections
    );
    Ok(())
}

pub(super) fn bwrap_proxy() -> Result<(), Failed> {
    if !bwrap_ready()? {
        return Ok(());
    }
    let p = Project::new();
    let api = HostServer::start("api says hi");
    let mut plan = p.plan();
    plan.endpoints = vec![Endpoint::ConnectProxy {
        listen_port: 3128,
        allow: vec![format!("127.0.0.1:{}", api.port)],
    }];
    let script = format!(
        r#"{EXCHANGE}
        echo "proxy=$HTTPS_PROXY"
        exchange 3128 'CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\nGET / HTTP/1.0\r\n\r\n'
        exchange 3128 'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n'
        exchange 3128 'GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n'
        true"#,
        port = api.port
    );
    let ran = contained(Backend::Bubblewrap, &p.spec("bash", &script), &plan)?;
    let out = lines(&ran, Stream::Stdout);
    ensure!(
        out.first().map(String::as_str) == Some("proxy=http://127.0.0.1:3128"),
        "HTTPS_PROXY inside: {out:?}"
    );
    ensure!(
        out.iter().any(|l| l == "api says hi"),
        "an allowed CONNECT did not tunnel to the endpoint: {out:?} {:?}",
        lines(&ran, Stream::Stderr)
    );
    let forbidden = out.iter().filter(|l| l.starts_with("HTTP/1.1 403")).count();
    ensure!(forbidden == 2, "expected two 403 answers: {out:?}");
    let refused: Vec<&str> = ran
        .attestation
        .refused_connections
        .iter()
        .map(|c| c.target.as_str())
        .collect();
    ensure!(
        refused == ["evil.example:443", "http://evil.example/"],
        "refused connections in the attestation: {:?}",
        ran.attestation.refused_connections
    );
    ensure!(
        ran.connections
            .iter()
            .any(|c| c.decision == Decision::Allowed
                && c.target == format!("127.0.0.1:{}", api.port)),
        "the allowed tunnel is not in the bridge log: {:?}",
        ran.connections
    );
    Ok(())
}
