//! The model-endpoint bridge: the sandboxed agent's only way out.
//!
//! Inside the sandbox, [`serve_forwards`] (run by `anvil-bench sandbox-init`) listens on the
//! sandbox's own loopback and relays each connection through a Unix socket bound into the
//! sandbox. Outside, a [`Bridge`] accepts on those sockets and connects only where policy
//! allows: a [`Endpoint::Forward`] to its one fixed target (the host:port of
//! `ANTHROPIC_BASE_URL`), a [`Endpoint::ConnectProxy`] to the `CONNECT` targets on its
//! allowlist (answering any other request with `403` and logging it).
//!
//! Invariant: the engine side never opens a connection the policy does not name, and every
//! connection that reaches it is in the log with its decision. When the bridge stops, its
//! sockets are removed and every relayed connection is shut down.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::attest::{ConnectionAttempt, Decision};
use crate::case::lifecycle::now;

/// How long the engine waits for an endpoint to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a proxy client may take to send its request head, and how big it may be.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_HEAD: usize = 16 * 1024;

/// One way out of the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Endpoint {
    /// Inside, `127.0.0.1:listen_port` reaches `target` (`host:port`) outside, and nothing else.
    #[serde(rename_all = "camelCase")]
    Forward { listen_port: u16, target: String },
    /// Inside, `HTTPS_PROXY=http://127.0.0.1:listen_port`: an HTTP CONNECT proxy that tunnels
    /// only to the `host:port` pairs in `allow` and refuses everything else with 403.
    #[serde(rename_all = "camelCase")]
    ConnectProxy {
        listen_port: u16,
        allow: Vec<String>,
    },
}

impl Endpoint {
    #[must_use]
    pub fn listen_port(&self) -> u16 {
        match self {
            Endpoint::Forward { listen_port, .. } | Endpoint::ConnectProxy { listen_port, .. } => {
                *listen_port
            }
        }
    }

    /// The in-sandbox address the agent connects to.
    #[must_use]
    pub fn via(&self) -> String {
        format!("127.0.0.1:{}", self.listen_port())
    }

    /// The endpoint that lets an agent inside reach the model at `base_url` unchanged:
    /// a loopback `http://` URL is forwarded on the same port; an `https://` URL goes through
    /// a CONNECT proxy on `proxy_port` that admits only its host and port.
    ///
    /// # Errors
    ///
    /// `EndpointError::NotAUrl` without a `://`; `EndpointError::Scheme` for a scheme other
    /// than http and https; `EndpointError::NoHostPort` when the authority has no host or
    /// an unusable port; `EndpointError::PlainHttpOffLoopback` for an `http://` URL
    /// whose host is not loopback.
    pub fn for_base_url(base_url: &str, proxy_port: u16) -> Result<Endpoint, EndpointError> {
        let (scheme, rest) = base_url
            .split_once("://")
            .ok_or_else(|| EndpointError::NotAUrl(base_url.to_string()))?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let default_port = match scheme {
            "http" => 80,
            "https" => 443,
            _ => return Err(EndpointError::Scheme(base_url.to_string())),
        };
        let (host, port) = split_host_port(authority, default_port)
            .ok_or_else(|| EndpointError::NoHostPort(base_url.to_string()))?;
        let target = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        match scheme {
            "http" if matches!(host.as_str(), "127.0.0.1" | "localhost" | "::1") => {
                Ok(Endpoint::Forward {
                    listen_port: port,
                    target,
                })
            }
            "http" => Err(EndpointError::PlainHttpOffLoopback(base_url.to_string())),
            _ => Ok(Endpoint::ConnectProxy {
                listen_port: proxy_port,
                allow: vec![target],
            }),
        }
    }
}

/// Why a model endpoint's URL cannot be bridged into the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error("`{0}` is not a URL")]
    NotAUrl(String),
    #[error("`{0}`: only http and https can be bridged")]
    Scheme(String),
    #[error("`{0}` has no usable host and port")]
    NoHostPort(String),
    #[error("`{0}`: a plain-http endpoint must be on loopback to be bridged")]
    PlainHttpOffLoopback(String),
}

/// `host[:port]` or `[v6][:port]`, host lowercased.
fn split_host_port(authority: &str, default_port: u16) -> Option<(String, u16)> {
    let authority = authority.rsplit('@').next()?;
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default_port,
            None => return None,
        };
        (host.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (authority.to_string(), default_port),
        }
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

/// Normalises a `host:port` for comparison with an allowlist entry.
fn normal_target(target: &str) -> Option<String> {
    let (host, port) = split_host_port(target, 0)?;
    (port != 0).then(|| {
        if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        }
    })
}

/// Relayed connections, so stopping the bridge can shut every one of them down.
#[derive(Default)]
struct Live {
    next: AtomicU64,
    conns: Mutex<HashMap<u64, (UnixStream, Option<TcpStream>)>>,
}

impl Live {
    fn add(&self, unix: &UnixStream) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let (Ok(mut conns), Ok(clone)) = (self.conns.lock(), unix.try_clone()) {
            conns.insert(id, (clone, None));
        }
        id
    }
    fn upstream(&self, id: u64, tcp: &TcpStream) {
        if let (Ok(mut conns), Ok(clone)) = (self.conns.lock(), tcp.try_clone())
            && let Some(entry) = conns.get_mut(&id)
        {
            entry.1 = Some(clone);
        }
    }
    fn remove(&self, id: u64) {
        if let Ok(mut conns) = self.conns.lock() {
            conns.remove(&id);
        }
    }
    fn shutdown_all(&self) {
        if let Ok(mut conns) = self.conns.lock() {
            for (_, (unix, tcp)) in conns.drain() {
                let _ = unix.shutdown(Shutdown::Both);
                if let Some(tcp) = tcp {
                    let _ = tcp.shutdown(Shutdown::Both);
                }
            }
        }
    }
}

struct Shared {
    stop: AtomicBool,
    log: Mutex<Vec<ConnectionAttempt>>,
    live: Live,
}

impl Shared {
    fn record(&self, via: &str, target: &str, decision: Decision, reason: Option<String>) {
        if let Ok(mut log) = self.log.lock() {
            log.push(ConnectionAttempt {
                at: now(),
                via: via.to_string(),
                target: target.to_string(),
                decision,
                reason,
            });
        }
    }
}

/// The engine side of the bridge: one Unix socket per endpoint in a private directory.
pub struct Bridge {
    dir: PathBuf,
    sockets: Vec<PathBuf>,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Bridge {
    /// Creates `dir` (which must not exist) and starts serving one socket per endpoint.
    /// The directory is the owner's alone (0700) whatever the umask: a co-tenant on the
    /// machine cannot reach the model endpoint or the rail relay through its sockets.
    ///
    /// # Errors
    ///
    /// The I/O error creating `dir` (it already exists, or its parent does not) or binding
    /// an endpoint's socket in it.
    pub fn start(dir: &Path, endpoints: &[Endpoint]) -> io::Result<Bridge> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(dir)?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            log: Mutex::new(Vec::new()),
            live: Live::default(),
        });
        let mut bridge = Bridge {
            dir: dir.to_path_buf(),
            sockets: Vec::new(),
            shared: shared.clone(),
            threads: Vec::new(),
        };
        for (i, endpoint) in endpoints.iter().enumerate() {
            let endpoint = endpoint.clone();
            let inner = shared.clone();
            bridge.add_service(
                &Bridge::socket_name(i),
                Arc::new(move |stream| serve(stream, &endpoint, &inner)),
            )?;
        }
        Ok(bridge)
    }

    /// Serves another socket `name` in the bridge directory: each connection is handed to
    /// `handler` on a thread of its own, until the bridge stops.
    ///
    /// # Errors
    ///
    /// The I/O error binding the socket: a file already named `name` in the directory, or a
    /// path too long for a Unix socket.
    pub fn add_service(
        &mut self,
        name: &str,
        handler: Arc<dyn Fn(UnixStream) + Send + Sync>,
    ) -> io::Result<()> {
        let path = self.dir.join(name);
        let listener = UnixListener::bind(&path)?;
        self.sockets.push(path);
        let shared = self.shared.clone();
        self.threads.push(std::thread::spawn(move || {
            for stream in listener.incoming() {
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(stream) = stream {
                    let handler = handler.clone();
                    std::thread::spawn(move || handler(stream));
                }
            }
        }));
        Ok(())
    }

    /// The directory holding the sockets (bound into the sandbox).
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The socket file name serving `endpoints[index]`.
    #[must_use]
    pub fn socket_name(index: usize) -> String {
        format!("endpoint-{index}.sock")
    }

    /// Every connection that reached the bridge so far.
    #[must_use]
    pub fn log(&self) -> Vec<ConnectionAttempt> {
        self.shared
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// Stops accepting, shuts every relayed connection down, removes the sockets and
    /// returns the log. Idempotent.
    pub fn stop(&mut self) -> Vec<ConnectionAttempt> {
        self.shared.stop.store(true, Ordering::SeqCst);
        for socket in &self.sockets {
            // Wake the accept loop so it sees the flag.
            let _ = UnixStream::connect(socket);
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        self.shared.live.shutdown_all();
        let _ = std::fs::remove_dir_all(&self.dir);
        self.log()
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(stream: UnixStream, endpoint: &Endpoint, shared: &Shared) {
    let id = shared.live.add(&stream);
    let via = endpoint.via();
    match endpoint {
        Endpoint::Forward { target, .. } => match connect(target) {
            Ok(tcp) => {
                shared.record(&via, target, Decision::Allowed, None);
                shared.live.upstream(id, &tcp);
                pipe(stream, tcp, &[]);
            }
            Err(e) => shared.record(&via, target, Decision::Failed, Some(e.to_string())),
        },
        Endpoint::ConnectProxy { allow, .. } => proxy(stream, allow, &via, id, shared),
    }
    shared.live.remove(id);
}

fn connect(target: &str) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the name resolved to no address");
    for addr in target.to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Reads an HTTP request head; returns it and any bytes read past it.
fn read_head(stream: &mut UnixStream) -> io::Result<(String, Vec<u8>)> {
    stream.set_read_timeout(Some(HEAD_TIMEOUT))?;
    let head = head_from(stream)?;
    stream.set_read_timeout(None)?;
    Ok(head)
}

/// The head and the bytes past it, from reads of whatever sizes the reader gives.
fn head_from(reader: &mut impl Read) -> io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((String::from_utf8_lossy(&buf).into_owned(), rest));
        }
        if buf.len() >= MAX_HEAD {
            return Err(io::Error::other("request head too large"));
        }
        // Never read past the cap: a head of MAX_HEAD bytes fits, one byte more does not,
        // whatever sizes the reads come in.
        let room = (MAX_HEAD - buf.len()).min(chunk.len());
        let n = reader.read(&mut chunk[..room])?;
        if n == 0 {
            return Err(io::Error::other(
                "connection closed before the request head",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn respond(stream: &mut UnixStream, status: &str, body: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

fn proxy(mut stream: UnixStream, allow: &[String], via: &str, id: u64, shared: &Shared) {
    let (head, rest) = match read_head(&mut stream) {
        Ok(h) => h,
        Err(e) => {
            shared.record(via, "", Decision::Refused, Some(e.to_string()));
            respond(&mut stream, "400 Bad Request", "malformed proxy request\n");
            return;
        }
    };
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if !method.eq_ignore_ascii_case("CONNECT") {
        let reason = format!("only CONNECT is proxied, not `{method}`");
        shared.record(via, target, Decision::Refused, Some(reason.clone()));
        respond(&mut stream, "403 Forbidden", &format!("{reason}\n"));
        return;
    }
    let wanted = normal_target(target);
    let allowed = wanted
        .as_ref()
        .is_some_and(|w| allow.iter().any(|a| normal_target(a).as_ref() == Some(w)));
    if !allowed {
        let reason = format!("`{target}` is not an allowed model endpoint");
        shared.record(via, target, Decision::Refused, Some(reason.clone()));
        respond(&mut stream, "403 Forbidden", &format!("{reason}\n"));
        return;
    }
    let target = wanted.unwrap_or_default();
    match connect(&target) {
        Ok(tcp) => {
            shared.record(via, &target, Decision::Allowed, None);
            shared.live.upstream(id, &tcp);
            if stream
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .is_ok()
            {
                pipe(stream, tcp, &rest);
            }
        }
        Err(e) => {
            shared.record(via, &target, Decision::Failed, Some(e.to_string()));
            respond(&mut stream, "502 Bad Gateway", &format!("{e}\n"));
        }
    }
}

/// Copies bytes both ways until both directions are closed. `early` is what the client
/// sent ahead of the tunnel being established.
fn pipe(unix: UnixStream, tcp: TcpStream, early: &[u8]) {
    let (Ok(mut unix_r), Ok(mut tcp_w)) = (unix.try_clone(), tcp.try_clone()) else {
        return;
    };
    if !early.is_empty() && tcp_w.write_all(early).is_err() {
        return;
    }
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut unix_r, &mut tcp_w);
        let _ = tcp_w.shutdown(Shutdown::Write);
    });
    let (mut tcp_r, mut unix_w) = (tcp, unix);
    let _ = io::copy(&mut tcp_r, &mut unix_w);
    let _ = unix_w.shutdown(Shutdown::Write);
    let _ = up.join();
}

/// One in-sandbox forward: `listen` (a loopback address) relays to the Unix `socket`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forward {
    pub listen: String,
    pub socket: PathBuf,
}

/// A `--forward` that is not `ADDR=SOCKET`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not ADDR=SOCKET")]
pub struct ForwardSyntaxError(String);

impl std::str::FromStr for Forward {
    type Err = ForwardSyntaxError;
    /// `ADDR=SOCKET`, e.g. `127.0.0.1:8080=/run/anvil-bench/sock/endpoint-0.sock`.
    fn from_str(s: &str) -> Result<Forward, ForwardSyntaxError> {
        let (listen, socket) = s
            .split_once('=')
            .ok_or_else(|| ForwardSyntaxError(s.to_string()))?;
        Ok(Forward {
            listen: listen.to_string(),
            socket: PathBuf::from(socket),
        })
    }
}

/// Inside the sandbox: binds every forward's listener (so they accept before the agent
/// starts) and relays each connection to its socket on a thread of its own.
///
/// # Errors
///
/// The I/O error binding a forward's listen address (in use, or not an address), its
/// message naming the address. Forwards bound before it keep serving.
pub fn serve_forwards(forwards: &[Forward]) -> io::Result<()> {
    for forward in forwards {
        let listener = TcpListener::bind(&forward.listen).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot listen on {}: {e}", forward.listen),
            )
        })?;
        let socket = forward.socket.clone();
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let socket = socket.clone();
                std::thread::spawn(move || {
                    if let Ok(unix) = UnixStream::connect(&socket) {
                        pipe(unix, tcp, &[]);
                    }
                });
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request head is read whole when it is of a size clients send (8 KiB of headers,
    /// the common server limit), with the bytes past it kept, and when it is exactly the
    /// 16 KiB cap; one byte past the cap or a closed connection is an error, never a hang.
    #[test]
    fn a_request_head_is_read_whole_up_to_its_cap() {
        use std::io::Write as _;
        let head = |pad: usize| {
            format!(
                "CONNECT api.example.com:443 HTTP/1.1\r\nX-Pad: {}\r\n\r\n",
                "a".repeat(pad)
            )
        };
        let (mut client, mut server) = UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            client.write_all(head(8 * 1024).as_bytes()).unwrap();
            client.write_all(b"tunnelled").unwrap();
            client
        });
        let (read, rest) = read_head(&mut server).unwrap();
        let _client = writer.join().unwrap();
        assert_eq!(read, head(8 * 1024));
        assert!(b"tunnelled".starts_with(&rest), "{rest:?}");

        // Exactly at the cap, then one byte past it, written in one go so one read could
        // take more than the room left.
        let at_cap = MAX_HEAD - head(0).len();
        let (mut client, mut server) = UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            client.write_all(head(at_cap).as_bytes()).unwrap();
            client
        });
        let (read, rest) = read_head(&mut server).unwrap();
        let _client = writer.join().unwrap();
        assert_eq!((read.len(), rest.len()), (MAX_HEAD, 0));

        let (mut client, mut server) = UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = client.write_all(head(at_cap + 1).as_bytes());
            client
        });
        let err = read_head(&mut server).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
        drop(server);
        let _ = writer.join();

        let (mut client, mut server) = UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = client.write_all("x".repeat(20 * 1024).as_bytes());
            client
        });
        let err = read_head(&mut server).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
        drop(server);
        let _ = writer.join();

        let (client, mut server) = UnixStream::pair().unwrap();
        drop(client);
        assert!(read_head(&mut server).is_err());
    }

    /// The cap holds for reads that do not divide it: a reader giving 1,000 bytes at a
    /// time never takes the head past 16 KiB.
    #[test]
    fn the_head_cap_holds_for_reads_of_any_size() {
        struct Trickle(std::io::Cursor<Vec<u8>>);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(1000);
                self.0.read(&mut buf[..n])
            }
        }
        let head = |pad: usize| format!("GET / HTTP/1.1\r\nX-Pad: {}\r\n\r\n", "a".repeat(pad));
        let at_cap = MAX_HEAD - head(0).len();
        let mut exact = Trickle(std::io::Cursor::new(head(at_cap).into_bytes()));
        let (read, rest) = head_from(&mut exact).unwrap();
        assert_eq!((read.len(), rest.len()), (MAX_HEAD, 0));
        let mut over = Trickle(std::io::Cursor::new(head(at_cap + 1).into_bytes()));
        let err = head_from(&mut over).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
    }

    #[test]
    fn base_urls_map_to_a_forward_or_an_allowlisted_proxy() {
        assert_eq!(
            Endpoint::for_base_url("http://127.0.0.1:8089/v1", 3128),
            Ok(Endpoint::Forward {
                listen_port: 8089,
                target: "127.0.0.1:8089".into()
            })
        );
        assert_eq!(
            Endpoint::for_base_url("https://API.anthropic.com", 3128),
            Ok(Endpoint::ConnectProxy {
                listen_port: 3128,
                allow: vec!["api.anthropic.com:443".into()]
            })
        );
        assert!(Endpoint::for_base_url("http://10.0.0.5:80", 3128).is_err());
        assert!(Endpoint::for_base_url("ftp://x", 3128).is_err());
    }

    /// An authority is `host[:port]` or `[v6][:port]`; anything after a bracketed host
    /// but a port is refused, never read as the default port.
    #[test]
    fn authorities_split_into_a_host_and_a_port() {
        let split = |a: &str| split_host_port(a, 443);
        assert_eq!(split("[::1]"), Some(("::1".into(), 443)));
        assert_eq!(split("[::1]:8443"), Some(("::1".into(), 8443)));
        assert_eq!(split("[::1]junk"), None);
        assert_eq!(split("[::1]:x"), None);
        assert_eq!(
            split("user@API.Example.com:80"),
            Some(("api.example.com".into(), 80))
        );
        assert_eq!(split("example.com"), Some(("example.com".into(), 443)));
        assert_eq!(split(":80"), None);
    }

    /// Stopping the bridge reaches every relayed connection, on both its sides: each gets
    /// its own id, and the upstream socket attached to it is shut down with it.
    #[test]
    fn stopping_shuts_down_every_live_connection_on_both_sides() {
        use std::io::Read as _;
        let live = Live::default();
        let (a, mut a_peer) = UnixStream::pair().unwrap();
        let (b, mut b_peer) = UnixStream::pair().unwrap();
        let (ia, ib) = (live.add(&a), live.add(&b));
        assert_ne!(ia, ib);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let tcp = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut tcp_peer, _) = listener.accept().unwrap();
        live.upstream(ib, &tcp);
        live.shutdown_all();
        let wait = Some(Duration::from_secs(5));
        a_peer.set_read_timeout(wait).unwrap();
        b_peer.set_read_timeout(wait).unwrap();
        tcp_peer.set_read_timeout(wait).unwrap();
        let mut byte = [0u8; 1];
        assert_eq!(
            a_peer.read(&mut byte).unwrap(),
            0,
            "the first connection stayed open"
        );
        assert_eq!(
            b_peer.read(&mut byte).unwrap(),
            0,
            "the second connection stayed open"
        );
        assert_eq!(
            tcp_peer.read(&mut byte).unwrap(),
            0,
            "the upstream side stayed open"
        );
        drop((a, b, tcp));
    }

    /// Each endpoint is served on a socket of its own.
    #[test]
    fn every_endpoint_gets_its_own_socket() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bridge");
        let forward = |port| Endpoint::Forward {
            listen_port: port,
            target: "127.0.0.1:9".into(),
        };
        let mut bridge = Bridge::start(&dir, &[forward(8080), forward(8081)]).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [Bridge::socket_name(0), Bridge::socket_name(1)]);
        assert_ne!(Bridge::socket_name(0), Bridge::socket_name(1));
        bridge.stop();
    }

    /// A bridge dropped without `stop` (an early return, a panic) still removes its
    /// directory: no socket into the model endpoint outlives it.
    #[test]
    fn a_dropped_bridge_removes_its_sockets() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bridge");
        let bridge = Bridge::start(
            &dir,
            &[Endpoint::Forward {
                listen_port: 8080,
                target: "127.0.0.1:9".into(),
            }],
        )
        .unwrap();
        assert!(dir.join(Bridge::socket_name(0)).exists());
        drop(bridge);
        assert!(!dir.exists(), "the bridge directory outlived the bridge");
    }

    /// Bytes a client sent past its CONNECT head go upstream first, then the rest of the
    /// stream, and the answer comes back.
    #[test]
    fn a_tunnel_forwards_the_bytes_read_past_the_head_first() {
        use std::io::{Read as _, Write as _};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let tcp = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut upstream, _) = listener.accept().unwrap();
        let (mut client, inside) = UnixStream::pair().unwrap();
        let tunnel = std::thread::spawn(move || pipe(inside, tcp, b"early "));
        client.write_all(b"later").unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        upstream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut got = Vec::new();
        upstream.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"early later");
        upstream.write_all(b"answer").unwrap();
        drop(upstream);
        let mut back = Vec::new();
        client.read_to_end(&mut back).unwrap();
        assert_eq!(back, b"answer");
        tunnel.join().unwrap();
    }

    #[test]
    fn connect_targets_compare_normalised() {
        assert_eq!(
            normal_target("API.Anthropic.com:443").as_deref(),
            Some("api.anthropic.com:443")
        );
        assert_eq!(normal_target("[::1]:80").as_deref(), Some("[::1]:80"));
        assert_eq!(normal_target("api.anthropic.com"), None);
        assert_eq!(normal_target("http://evil.example/"), None);
    }
}

#[cfg(test)]
mod private_dir {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_bridge_directory_is_the_owners_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bridge");
        let bridge = super::Bridge::start(&dir, &[]).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "bridge directory mode {mode:o}");
        drop(bridge);
    }
}
