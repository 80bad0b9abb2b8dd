//! The control plane and upstream's controllers as child processes: the binaries that
//! `upstream/build.sh` builds into `upstream/bin/` (specs/upstream-harness.md). Every server
//! binds 127.0.0.1; a child that fails is reported with the log it wrote.

use crate::Error;
use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The control plane's binary in the binaries' folder.
pub const CONTROL_PLANE: &str = "controlplane";
/// The prefix of a release's controller binary: `taint-eviction-v1.37.2`.
pub const CONTROLLER_PREFIX: &str = "taint-eviction-v";

/// The folder of upstream's binaries and what it holds.
#[derive(Clone, Debug)]
pub struct Binaries {
    dir: PathBuf,
}

impl Binaries {
    /// The binaries of `dir` (`upstream/bin`).
    pub fn new(dir: impl Into<PathBuf>) -> Binaries {
        Binaries { dir: dir.into() }
    }

    /// The control plane's binary, or what to run to build it.
    pub fn control_plane(&self) -> Result<PathBuf, Error> {
        let path = self.dir.join(CONTROL_PLANE);
        if path.is_file() {
            Ok(path)
        } else {
            Err(Error::new(format!(
                "{}: not built: run `upstream/build.sh` first{}",
                path.display(),
                go_hint()
            )))
        }
    }

    /// The controller of `release` (`1.37.2`), or the releases that are built and what to run
    /// to build this one.
    pub fn controller(&self, release: &str) -> Result<PathBuf, Error> {
        let path = self.dir.join(format!("{CONTROLLER_PREFIX}{release}"));
        if path.is_file() {
            return Ok(path);
        }
        let built = self.releases();
        let built = if built.is_empty() {
            "none".to_string()
        } else {
            built.join(", ")
        };
        Err(Error::new(format!(
            "Kubernetes {release}: its controller is not built ({} missing; built: {built}): \
             run `upstream/build.sh {release}`{}",
            path.display(),
            go_hint()
        )))
    }

    /// `release` as built: a minor (`1.37`) is its newest built patch; a patch release is
    /// itself (whether built or not: [`Binaries::controller`] says).
    pub fn resolve(&self, release: &str) -> String {
        if release.split('.').count() != 2 {
            return release.to_string();
        }
        let prefix = format!("{release}.");
        self.releases()
            .into_iter()
            .rfind(|r| r.starts_with(&prefix))
            .unwrap_or_else(|| release.to_string())
    }

    /// The releases whose controller is built, oldest first.
    pub fn releases(&self) -> Vec<String> {
        let mut releases: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_prefix(CONTROLLER_PREFIX).map(str::to_string)
            })
            .filter(|r| version_key(r).is_some())
            .collect();
        releases.sort_by_key(|r| version_key(r));
        releases
    }
}

/// `1.37.2` as numbers, for ordering releases.
pub fn version_key(release: &str) -> Option<(u32, u32, u32)> {
    let mut parts = release.split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// What to install when Go is missing (building the binaries needs it; nothing else does).
fn go_hint() -> &'static str {
    let found = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join("go").is_file()));
    if found {
        ""
    } else {
        " (it needs Go 1.26 or later, which is not on PATH: install it from https://go.dev/dl/)"
    }
}

/// A running kube-apiserver with embedded etcd, on 127.0.0.1.
#[derive(Debug)]
pub struct ControlPlane {
    child: Option<Child>,
    binary: PathBuf,
    dir: PathBuf,
    url: String,
    started: Duration,
}

impl ControlPlane {
    /// Starts the control plane with its files in `dir` (kubeconfig, audit log, logs) and waits
    /// until it is ready, at most `timeout`. A port in use, a process that exits, or one that
    /// is not ready in time is an error naming the log to read.
    pub fn start(
        binary: &Path,
        dir: &Path,
        port: Option<u16>,
        timeout: Duration,
    ) -> Result<ControlPlane, Error> {
        if let Some(port) = port {
            TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
                Error::new(format!("--port {port}: 127.0.0.1:{port} is not free: {e}"))
            })?;
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::new(format!("{}: cannot create: {e}", dir.display())))?;
        let ready = dir.join("ready");
        let _ = std::fs::remove_file(&ready);
        let out = dir.join("controlplane.out");
        let mut command = Command::new(binary);
        command.arg("--dir").arg(dir);
        if let Some(port) = port {
            command.arg("--port").arg(port.to_string());
        }
        let begun = Instant::now();
        let child = spawn(command, &out, binary)?;
        let mut cp = ControlPlane {
            child: Some(child),
            binary: binary.to_path_buf(),
            dir: dir.to_path_buf(),
            url: String::new(),
            started: Duration::ZERO,
        };
        let log = dir.join("controlplane.log");
        loop {
            if let Some(status) = cp.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                cp.child = None;
                return Err(Error::new(format!(
                    "the control plane exited ({status}) before it was ready: see {} and {}{}",
                    log.display(),
                    out.display(),
                    tail(&[&log, &out])
                )));
            }
            if let Ok(text) = std::fs::read_to_string(&ready) {
                if let Some(url) = text.split_whitespace().find(|w| w.starts_with("https://")) {
                    cp.url = url.to_string();
                    cp.started = begun.elapsed();
                    return Ok(cp);
                }
            }
            if begun.elapsed() > timeout {
                cp.stop();
                return Err(Error::new(format!(
                    "the control plane was not ready within {} s: see {} and {}{}",
                    timeout.as_secs(),
                    log.display(),
                    out.display(),
                    tail(&[&log, &out])
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops the API server and etcd, leaves them down for `down`, and starts them again in
    /// the same folder on the same port, waiting at most `timeout` until ready: to its clients,
    /// the same API server gone away and back (same objects, URL, certificates and token).
    pub fn restart(&mut self, down: Duration, timeout: Duration) -> Result<(), Error> {
        let port = self
            .url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse::<u16>().ok())
            .ok_or_else(|| Error::new(format!("{}: no port to restart on", self.url)))?;
        self.stop();
        std::thread::sleep(down);
        let again = ControlPlane::start(&self.binary, &self.dir, Some(port), timeout)?;
        *self = again;
        Ok(())
    }

    /// How long the start took, until ready.
    pub fn start_time(&self) -> Duration {
        self.started
    }

    /// The admin kubeconfig the control plane wrote.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// The API server's audit log (pods and nodes at RequestResponse, events at Request).
    pub fn audit_log(&self) -> PathBuf {
        self.dir.join("audit.log")
    }

    /// The folder of the control plane's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// SIGTERM, then SIGKILL if it has not ended within 10 s.
    pub fn stop(&mut self) {
        if let Some(child) = self.child.take() {
            terminate(child, Duration::from_secs(10));
        }
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A release's taint-eviction controller, wired as kube-controller-manager wires it.
#[derive(Debug)]
pub struct Controller {
    child: Option<Child>,
    log: PathBuf,
}

/// How a controller is started.
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// Arguments before the common flags (`controller --profile fixed` for taintcheck's own).
    pub args: Vec<String>,
    /// The kubeconfig it authenticates with (its own service account's token).
    pub kubeconfig: PathBuf,
    /// `--kube-api-qps` and `--kube-api-burst` (kube-controller-manager's 20 and 30).
    pub qps: u32,
    /// See `qps`.
    pub burst: u32,
    /// `--feature-gates`, if any.
    pub feature_gates: Option<String>,
    /// Where its output goes.
    pub log: PathBuf,
}

impl Controller {
    /// Starts the controller binary.
    pub fn start(binary: &Path, options: &ControllerOptions) -> Result<Controller, Error> {
        let mut command = Command::new(binary);
        command
            .args(&options.args)
            .arg("--kubeconfig")
            .arg(&options.kubeconfig)
            .arg("--kube-api-qps")
            .arg(options.qps.to_string())
            .arg("--kube-api-burst")
            .arg(options.burst.to_string());
        if let Some(gates) = &options.feature_gates {
            command.arg("--feature-gates").arg(gates);
        }
        let child = spawn(command, &options.log, binary)?;
        Ok(Controller {
            child: Some(child),
            log: options.log.clone(),
        })
    }

    /// An error naming the log if the controller has exited.
    pub fn check_running(&mut self) -> Result<(), Error> {
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => Ok(()),
            Some(Ok(Some(status))) => {
                self.child = None;
                Err(Error::new(format!(
                    "the controller exited ({status}): see {}{}",
                    self.log.display(),
                    tail(&[&self.log])
                )))
            }
            Some(Err(e)) => Err(Error::new(format!("the controller: {e}"))),
            None => Err(Error::new("the controller was stopped")),
        }
    }

    /// The controller's output.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// SIGTERM, then SIGKILL if it has not ended within 5 s.
    pub fn stop(&mut self) {
        if let Some(child) = self.child.take() {
            terminate(child, Duration::from_secs(5));
        }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts `command` with its stdout and stderr appended to `log`.
fn spawn(mut command: Command, log: &Path, binary: &Path) -> Result<Child, Error> {
    let file = File::options()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| Error::new(format!("{}: cannot write: {e}", log.display())))?;
    let err = file
        .try_clone()
        .map_err(|e| Error::new(format!("{}: {e}", log.display())))?;
    command
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| Error::new(format!("{}: cannot start: {e}", binary.display())))
}

/// SIGTERM, wait up to `grace`, then SIGKILL.
fn terminate(mut child: Child, grace: Duration) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on our own child's pid, which stays reserved until we reap it.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let begun = Instant::now();
    while begun.elapsed() < grace {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The last lines of the first of `logs` that has any, indented, for an error message.
fn tail(logs: &[&Path]) -> String {
    for log in logs {
        let Ok(text) = std::fs::read_to_string(log) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            continue;
        }
        let last = &lines[lines.len().saturating_sub(5)..];
        return format!("; its last lines:\n  {}", last.join("\n  "));
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_binaries_say_how_to_build_them() {
        let dir = std::env::temp_dir().join(format!("tc-bin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("taint-eviction-v1.18.6"), "").unwrap();
        std::fs::write(dir.join("taint-eviction-v1.9.0"), "").unwrap();
        std::fs::write(dir.join("taint-eviction-vnext"), "").unwrap();
        let bins = Binaries::new(&dir);
        assert_eq!(bins.releases(), ["1.9.0", "1.18.6"]);
        assert_eq!(bins.resolve("1.18"), "1.18.6");
        assert_eq!(bins.resolve("1.9"), "1.9.0");
        assert_eq!(bins.resolve("1.37"), "1.37");
        assert_eq!(bins.resolve("1.18.2"), "1.18.2");
        let e = bins.controller("1.37.2").unwrap_err().to_string();
        assert!(e.contains("run `upstream/build.sh 1.37.2`"), "{e}");
        assert!(e.contains("built: 1.9.0, 1.18.6"), "{e}");
        let e = bins.control_plane().unwrap_err().to_string();
        assert!(e.contains("controlplane: not built"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_port_in_use_is_refused_before_starting() {
        let taken = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = taken.local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("tc-port-{}", std::process::id()));
        let e = ControlPlane::start(Path::new("/bin/true"), &dir, Some(port), Duration::ZERO)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("127.0.0.1:{port} is not free")), "{e}");
    }

    #[test]
    fn a_control_plane_that_exits_is_reported_with_its_log() {
        let dir = std::env::temp_dir().join(format!("tc-exit-{}", std::process::id()));
        let script = std::env::temp_dir().join(format!("tc-exit-{}.sh", std::process::id()));
        std::fs::write(&script, "#!/bin/sh\necho 'etcd: bad config' >&2\nexit 3\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let e = ControlPlane::start(&script, &dir, None, Duration::from_secs(10))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("exited (exit status: 3) before it was ready"),
            "{e}"
        );
        assert!(e.contains("controlplane.log"), "{e}");
        assert!(e.contains("etcd: bad config"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_file(&script).unwrap();
    }
}
