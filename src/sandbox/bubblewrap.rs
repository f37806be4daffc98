//! The bubblewrap backend: turns a [`ProcessSpec`] into a `bwrap` invocation whose mount
//! table is built from a [`SandboxPlan`], and the rail sandbox relayed rails run in.
//!
//! Invariant: the agent's sandbox mounts the system read-only, the repository and the run
//! root read-only, only `<run>/workspace` and `<run>/output` read-write, its own `/proc`,
//! `/dev` and an empty `/tmp`, and nothing else: no bind source is, contains or lies inside a
//! hidden path (the plan is refused otherwise), and the network namespace is always new, so
//! the bridge sockets are the only way out.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::SandboxError;
use super::bridge::{Bridge, Endpoint};
use super::relay::{RAIL_SOCKET_ENV, RAIL_SOCKET_NAME, RailServer};
use crate::case::run::{OUTPUT_DIR, WORKSPACE_DIR};
use crate::process::{ProcessSpec, RunnerError};

/// Where engine-provided things appear inside the sandbox.
pub const INSIDE_ROOT: &str = "/run/anvil-bench";
/// The anvil-bench binary inside (its directory is put first on the agent's PATH).
pub const INSIDE_BIN_DIR: &str = "/run/anvil-bench/bin";
pub const INSIDE_BIN: &str = "/run/anvil-bench/bin/anvil-bench";
/// The bridge's Unix sockets inside.
pub const INSIDE_SOCKETS: &str = "/run/anvil-bench/sock";
/// How to install bubblewrap, quoted when it is missing.
pub const INSTALL_HINT: &str = "apt-get install bubblewrap";

/// The system, read-only. Missing ones are skipped (`--ro-bind-try`).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// The parts of /etc programs need to run, resolve names and verify TLS; not the rest (no
/// shadow, no ssh keys, no machine secrets).
const ETC: &[&str] = &[
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/nsswitch.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/crypto-policies",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/os-release",
    "/etc/mime.types",
    "/etc/gitconfig",
];

/// What to sandbox and what must stay out of reach.
#[derive(Debug, Clone)]
pub struct SandboxPlan {
    /// The repository under investigation: read-only inside.
    pub repo: PathBuf,
    /// The run directory: read-only inside, except `workspace/` and `output/`.
    pub run_dir: PathBuf,
    /// Paths that must be unreachable (the project's `labels-private/`): never mounted, and
    /// no mounted directory may contain them.
    pub hidden: Vec<PathBuf>,
    /// The only ways out (see [`Endpoint`]).
    pub endpoints: Vec<Endpoint>,
    /// More read-only directories the agent needs (an interpreter installed elsewhere).
    pub extra_ro: Vec<PathBuf>,
    /// The anvil-bench binary: runs `sandbox-init` inside and serves the rails.
    pub anvil_bench: PathBuf,
    /// Files the rails read besides the repository and the run (the AIR); mounted read-only
    /// in the rail sandbox only.
    pub rail_inputs: Vec<PathBuf>,
}

impl SandboxPlan {
    /// The plan for an opened run: repository and AIR from its case.json, no endpoints.
    #[must_use]
    pub fn for_run(
        handle: &crate::case::RunHandle,
        anvil_bench: &Path,
        hidden: Vec<PathBuf>,
    ) -> SandboxPlan {
        let run = handle.run();
        SandboxPlan {
            repo: PathBuf::from(&run.doc.inputs.repository),
            run_dir: run.dir.clone(),
            hidden,
            endpoints: Vec::new(),
            extra_ro: Vec::new(),
            anvil_bench: anvil_bench.to_path_buf(),
            rail_inputs: vec![PathBuf::from(&run.doc.inputs.air)],
        }
    }
}

/// A prepared bubblewrap run: the wrapped spec and the bridge serving it.
pub(crate) struct Wrapped {
    pub spec: ProcessSpec,
    pub bridge: Bridge,
    /// Directories mounted read-only beyond the system, the repository and the run (the
    /// agent program's own install directories and the plan's `extra_ro`).
    pub extra_ro: Vec<PathBuf>,
}

fn real(path: &Path, what: &'static str) -> Result<PathBuf, SandboxError> {
    std::fs::canonicalize(path).map_err(|source| SandboxError::Unusable {
        what,
        path: path.to_path_buf(),
        source,
    })
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` on the child's `PATH` (relative entries against `cwd`), as execvp would find it.
fn on_path(name: &str, env: &BTreeMap<String, String>, cwd: &Path) -> Option<PathBuf> {
    let dirs = env.get("PATH").map_or("", String::as_str);
    dirs.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| cwd.join(d).join(name))
        .find(|p| is_executable(p))
}

/// The agent program as the runner would resolve it, with the same errors.
fn resolve_program(spec: &ProcessSpec) -> Result<PathBuf, SandboxError> {
    let not_found = |on_path| {
        SandboxError::Program(RunnerError::NotFound {
            program: spec.program.clone(),
            on_path,
            hint: spec.install_hint.clone(),
        })
    };
    if spec.program.contains('/') {
        let path = spec.cwd.join(&spec.program);
        return match std::fs::metadata(&path) {
            Err(_) => Err(not_found(false)),
            Ok(_) if is_executable(&path) => Ok(path),
            Ok(_) => Err(SandboxError::Program(RunnerError::NotExecutable {
                program: spec.program.clone(),
                path,
            })),
        };
    }
    if spec.program.is_empty() {
        return Err(not_found(true));
    }
    on_path(&spec.program, &spec.env, &spec.cwd).ok_or_else(|| not_found(true))
}

fn under_system(path: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|d| path.starts_with(d))
}

/// The directories a program needs beyond the system: where it was found, where it really
/// lives, and the same for the interpreter its `#!` line names.
fn program_dirs(found: &Path, env: &BTreeMap<String, String>, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut add = |file: &Path| {
        for candidate in [Some(file.to_path_buf()), std::fs::canonicalize(file).ok()]
            .into_iter()
            .flatten()
        {
            if let Some(dir) = candidate.parent()
                && let Ok(dir) = std::fs::canonicalize(dir)
                && !under_system(&dir)
                && !dirs.contains(&dir)
            {
                dirs.push(dir);
            }
        }
    };
    add(found);
    let mut head = [0u8; 256];
    let n = std::fs::File::open(found)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    if let Some(line) = head[..n].strip_prefix(b"#!") {
        let line = String::from_utf8_lossy(line);
        let line = line.lines().next().unwrap_or("");
        let mut words = line.split_whitespace();
        if let Some(interp) = words.next() {
            let interp = Path::new(interp);
            add(interp);
            if interp.file_name().is_some_and(|n| n == "env")
                && let Some(name) = words.find(|w| !w.starts_with('-'))
                && let Some(path) = on_path(name, env, cwd)
            {
                add(&path);
            }
        }
    }
    dirs
}

/// Refuses a mount whose source is, contains, or lies inside a hidden path.
fn check_hidden(sources: &[PathBuf], hidden: &[PathBuf]) -> Result<(), SandboxError> {
    for h in hidden {
        let h = std::fs::canonicalize(h).unwrap_or_else(|_| h.clone());
        for src in sources {
            if h.starts_with(src) || src.starts_with(&h) {
                return Err(SandboxError::HiddenExposed {
                    hidden: h.clone(),
                    via: src.clone(),
                });
            }
        }
    }
    Ok(())
}

fn s(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Namespaces, process lifetime and the system view shared by both sandboxes.
fn base_args() -> Vec<String> {
    let mut a: Vec<String> = [
        "--unshare-user-try",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
    ]
    .map(String::from)
    .to_vec();
    for dir in SYSTEM_DIRS.iter().chain(ETC) {
        a.extend(["--ro-bind-try".into(), dir.to_string(), dir.to_string()]);
    }
    a.extend(["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"].map(String::from));
    a
}

fn ro(a: &mut Vec<String>, src: &Path, dest: &Path) {
    a.extend(["--ro-bind".into(), s(src), s(dest)]);
}

fn rw(a: &mut Vec<String>, src: &Path, dest: &Path) {
    a.extend(["--bind".into(), s(src), s(dest)]);
}

/// Finds bwrap on the child's PATH. Its absence is an error, never a reason to run natively.
///
/// # Errors
///
/// `SandboxError::BubblewrapMissing` when no executable `bwrap` is on `env`'s `PATH`
/// (relative entries taken against `cwd`).
pub fn find_bwrap(env: &BTreeMap<String, String>, cwd: &Path) -> Result<PathBuf, SandboxError> {
    on_path("bwrap", env, cwd).ok_or(SandboxError::BubblewrapMissing)
}

/// The agent's environment inside: `env` with the engine's binary first on `PATH`, the
/// rail relay's socket, and the CONNECT proxy (when an endpoint is one) as `HTTPS_PROXY`.
fn inside_env(
    env: &BTreeMap<String, String>,
    endpoints: &[Endpoint],
    inside_sockets: &Path,
) -> BTreeMap<String, String> {
    let mut env = env.clone();
    let path = env.get("PATH").cloned().unwrap_or_default();
    env.insert(
        "PATH".into(),
        if path.is_empty() {
            INSIDE_BIN_DIR.to_string()
        } else {
            format!("{INSIDE_BIN_DIR}:{path}")
        },
    );
    env.insert(
        RAIL_SOCKET_ENV.into(),
        s(&inside_sockets.join(RAIL_SOCKET_NAME)),
    );
    if let Some(proxy) = endpoints
        .iter()
        .find(|e| matches!(e, Endpoint::ConnectProxy { .. }))
    {
        let url = format!("http://{}", proxy.via());
        for name in ["HTTPS_PROXY", "https_proxy"] {
            env.insert(name.into(), url.clone());
        }
        for name in ["NO_PROXY", "no_proxy"] {
            env.insert(name.into(), "127.0.0.1,localhost,::1".into());
        }
    }
    env
}

/// Every host path the two sandboxes mount, at its real location.
struct Mounts {
    repo: PathBuf,
    run: PathBuf,
    workspace: PathBuf,
    output: PathBuf,
    cwd: PathBuf,
    anvil_bench: PathBuf,
    /// The agent program as the runner would resolve it.
    program: PathBuf,
    /// The program's own directories, then the plan's `extra_ro`.
    extra: Vec<PathBuf>,
    rail_inputs: Vec<PathBuf>,
}

impl Mounts {
    /// Resolves what `spec` and `plan` mount; refuses a path that cannot be resolved, a
    /// repository inside the run, and a program the runner could not run.
    fn resolve(spec: &ProcessSpec, plan: &SandboxPlan) -> Result<Mounts, SandboxError> {
        let repo = real(&plan.repo, "repository")?;
        let run = real(&plan.run_dir, "run directory")?;
        let workspace = real(&run.join(WORKSPACE_DIR), "workspace")?;
        let output = real(&run.join(OUTPUT_DIR), "output directory")?;
        if repo.starts_with(&run) {
            return Err(SandboxError::RepoInsideRun { repo, run });
        }
        let cwd = real(&spec.cwd, "working directory")?;
        let anvil_bench = real(&plan.anvil_bench, "anvil-bench binary")?;
        let program = resolve_program(spec)?;
        let mut extra: Vec<PathBuf> = program_dirs(&program, &spec.env, &spec.cwd);
        for dir in &plan.extra_ro {
            let dir = real(dir, "extra read-only path")?;
            if !extra.contains(&dir) {
                extra.push(dir);
            }
        }
        let rail_inputs = plan
            .rail_inputs
            .iter()
            .map(|p| real(p, "rail input"))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Mounts {
            repo,
            run,
            workspace,
            output,
            cwd,
            anvil_bench,
            program,
            extra,
            rail_inputs,
        })
    }

    /// Every bind source of either sandbox, the system's included: what no hidden path may
    /// be, contain or lie inside.
    fn sources(&self) -> Vec<PathBuf> {
        let mut sources: Vec<PathBuf> = SYSTEM_DIRS.iter().chain(ETC).map(PathBuf::from).collect();
        sources.extend(self.extra.iter().cloned());
        sources.extend(self.rail_inputs.iter().cloned());
        sources.extend([
            self.repo.clone(),
            self.run.clone(),
            self.anvil_bench.clone(),
        ]);
        sources
    }

    /// The rail sandbox's `bwrap` arguments: what a rail needs, with the run root writable.
    fn rail_args(&self) -> Vec<String> {
        let mut rail_args = base_args();
        ro(&mut rail_args, &self.anvil_bench, Path::new(INSIDE_BIN));
        ro(&mut rail_args, &self.repo, &self.repo);
        for input in &self.rail_inputs {
            ro(&mut rail_args, input, input);
        }
        rw(&mut rail_args, &self.run, &self.run);
        rail_args
    }

    /// The agent sandbox's `bwrap` arguments, through `sandbox-init` forwarding each of
    /// `endpoints` to its socket in `bridge_dir`, down to the program and `program_args`.
    fn agent_args(
        &self,
        bridge_dir: &Path,
        endpoints: &[Endpoint],
        program_args: &[String],
    ) -> Vec<String> {
        let inside_sockets = Path::new(INSIDE_SOCKETS);
        // Later mounts cover earlier ones, so the writable pair comes last.
        let mut args = base_args();
        for dir in &self.extra {
            ro(&mut args, dir, dir);
        }
        ro(&mut args, &self.anvil_bench, Path::new(INSIDE_BIN));
        ro(&mut args, bridge_dir, inside_sockets);
        ro(&mut args, &self.repo, &self.repo);
        ro(&mut args, &self.run, &self.run);
        rw(&mut args, &self.workspace, &self.workspace);
        rw(&mut args, &self.output, &self.output);
        args.extend([
            "--chdir".into(),
            s(&self.cwd),
            "--".into(),
            INSIDE_BIN.into(),
        ]);
        args.push("sandbox-init".into());
        for (i, endpoint) in endpoints.iter().enumerate() {
            let socket = inside_sockets.join(Bridge::socket_name(i));
            args.push("--forward".into());
            args.push(format!("{}={}", endpoint.via(), socket.display()));
        }
        args.push("--".into());
        args.push(s(&self.program));
        args.extend(program_args.iter().cloned());
        args
    }
}

/// Builds the agent's sandbox for `spec` under `plan`, and starts the bridge it talks to.
pub(crate) fn wrap(spec: &ProcessSpec, plan: &SandboxPlan) -> Result<Wrapped, SandboxError> {
    let bwrap = find_bwrap(&spec.env, &spec.cwd)?;
    let mounts = Mounts::resolve(spec, plan)?;
    check_hidden(&mounts.sources(), &plan.hidden)?;

    let dir = std::env::temp_dir().join(format!("anvil-bench-bridge-{}", ulid::Ulid::new()));
    let mut bridge =
        Bridge::start(&dir, &plan.endpoints).map_err(|source| SandboxError::Bridge {
            dir: dir.clone(),
            source,
        })?;

    let rails = RailServer {
        bwrap: bwrap.clone(),
        sandbox_args: mounts.rail_args(),
        program: INSIDE_BIN.into(),
        env: vec![
            ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
            ("LANG".into(), "C.UTF-8".into()),
            ("HOME".into(), "/tmp".into()),
        ],
    };
    bridge
        .add_service(
            RAIL_SOCKET_NAME,
            std::sync::Arc::new(move |stream| rails.serve(stream)),
        )
        .map_err(|source| SandboxError::Bridge {
            dir: dir.clone(),
            source,
        })?;

    let args = mounts.agent_args(bridge.dir(), &plan.endpoints, &spec.args);
    Ok(Wrapped {
        spec: ProcessSpec {
            program: s(&bwrap),
            args,
            cwd: spec.cwd.clone(),
            env: inside_env(&spec.env, &plan.endpoints, Path::new(INSIDE_SOCKETS)),
            timeout: spec.timeout,
            install_hint: Some(INSTALL_HINT.into()),
            log_path: spec.log_path.clone(),
        },
        bridge,
        extra_ro: mounts.extra,
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// Writes `body` to `path` as an executable file.
    fn executable(path: &Path, body: &str) {
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// As execvp: only an executable regular file counts, so a directory (or a plain file)
    /// named like the program earlier on `PATH` is passed over.
    #[test]
    fn a_program_on_path_is_an_executable_file() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
        );
        std::fs::create_dir_all(a.join("agent")).unwrap();
        std::fs::set_permissions(a.join("agent"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("agent"), "not executable").unwrap();
        std::fs::create_dir_all(&c).unwrap();
        executable(&c.join("agent"), "#!/bin/sh\n");
        let env = BTreeMap::from([(
            "PATH".to_string(),
            format!("{}:{}:{}", a.display(), b.display(), c.display()),
        )]);
        assert_eq!(on_path("agent", &env, tmp.path()), Some(c.join("agent")));
        assert_eq!(on_path("missing", &env, tmp.path()), None);
    }

    /// The directories mounted for a program: where it was found and where its symlink
    /// really leads, and for a `#!/usr/bin/env NAME` script where NAME is on PATH; never a
    /// system directory (`/usr/bin`, where `env` lives, is mounted anyway).
    #[test]
    fn a_programs_own_directories_are_found_through_links_and_its_interpreter() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (bin, real, interp_dir) = (root.join("bin"), root.join("lib/real"), root.join("node"));
        for d in [&bin, &real, &interp_dir] {
            std::fs::create_dir_all(d).unwrap();
        }
        executable(&real.join("agent"), "#!/usr/bin/env -S mynode --flag\n");
        executable(&interp_dir.join("mynode"), "");
        std::os::unix::fs::symlink(real.join("agent"), bin.join("agent")).unwrap();
        let env = BTreeMap::from([("PATH".to_string(), interp_dir.display().to_string())]);
        assert_eq!(
            program_dirs(&bin.join("agent"), &env, &root),
            [bin.clone(), real.clone(), interp_dir.clone()]
        );
        // An interpreter named by its path is mounted from where it is.
        executable(
            &real.join("direct"),
            &format!("#!{}\n", interp_dir.join("mynode").display()),
        );
        assert_eq!(
            program_dirs(&real.join("direct"), &BTreeMap::new(), &root),
            [real.clone(), interp_dir.clone()]
        );
        // A program in a system directory needs nothing more.
        assert!(program_dirs(Path::new("/usr/bin/env"), &env, &root).is_empty());
    }

    /// What the sandboxes mount, resolved: real paths, the program's own directory then the
    /// plan's extras, each once; a repository inside the run and a missing extra refused.
    #[test]
    fn mounts_resolve_to_real_paths_each_once() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (repo, run, tools) = (root.join("repo"), root.join("run"), root.join("tools"));
        for d in [
            &repo,
            &run.join(WORKSPACE_DIR),
            &run.join(OUTPUT_DIR),
            &tools,
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        executable(&tools.join("agent"), "");
        std::os::unix::fs::symlink(&tools, root.join("tools-link")).unwrap();
        let spec = ProcessSpec {
            program: tools.join("agent").display().to_string(),
            args: Vec::new(),
            cwd: run.join(WORKSPACE_DIR),
            env: BTreeMap::new(),
            timeout: std::time::Duration::from_secs(1),
            install_hint: None,
            log_path: None,
        };
        let plan = |repo: PathBuf, extra_ro: Vec<PathBuf>| SandboxPlan {
            repo,
            run_dir: run.clone(),
            hidden: Vec::new(),
            endpoints: Vec::new(),
            extra_ro,
            anvil_bench: tools.join("agent"),
            rail_inputs: Vec::new(),
        };
        let extra = vec![root.join("tools-link"), repo.clone(), repo.clone()];
        let mounts = Mounts::resolve(&spec, &plan(repo.clone(), extra)).unwrap();
        assert_eq!(mounts.extra, [tools.clone(), repo.clone()]);
        assert_eq!(mounts.workspace, run.join(WORKSPACE_DIR));
        assert!(matches!(
            Mounts::resolve(&spec, &plan(run.join(WORKSPACE_DIR), Vec::new())),
            Err(SandboxError::RepoInsideRun { .. })
        ));
        assert!(matches!(
            Mounts::resolve(&spec, &plan(repo.clone(), vec![root.join("missing")])),
            Err(SandboxError::Unusable { .. })
        ));
    }

    /// A program named by a path resolves as the runner would: an executable file is the
    /// program, a plain file is not executable, a missing one is not found (not on PATH).
    #[test]
    fn a_program_named_by_path_resolves_with_the_runners_errors() {
        let tmp = tempfile::tempdir().unwrap();
        executable(&tmp.path().join("agent"), "#!/bin/sh\n");
        std::fs::write(tmp.path().join("plain"), "not executable").unwrap();
        let spec = |program: &str| ProcessSpec {
            program: program.to_string(),
            args: Vec::new(),
            cwd: tmp.path().to_path_buf(),
            env: BTreeMap::new(),
            timeout: std::time::Duration::from_secs(1),
            install_hint: None,
            log_path: None,
        };
        assert_eq!(
            resolve_program(&spec("./agent")).unwrap(),
            tmp.path().join("./agent")
        );
        assert!(matches!(
            resolve_program(&spec("./plain")),
            Err(SandboxError::Program(RunnerError::NotExecutable { .. }))
        ));
        assert!(matches!(
            resolve_program(&spec("./missing")),
            Err(SandboxError::Program(RunnerError::NotFound {
                on_path: false,
                ..
            }))
        ));
        assert!(matches!(
            resolve_program(&spec("")),
            Err(SandboxError::Program(RunnerError::NotFound {
                on_path: true,
                ..
            }))
        ));
    }
}
