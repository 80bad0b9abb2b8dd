//! `taintcheck proxy`: a Kubernetes API proxy that a controller reaches through its kubeconfig,
//! forwarding every request to the API server and writing what the controller sent and saw into
//! an exchange log (PROXY-*, specs/proxy.md), which `taintcheck import` turns into a trace. It
//! keeps no credentials: the controller's `Authorization` header goes through as sent. It
//! decides nothing about taints; it forwards and records.

pub mod cost;
pub mod fault;
mod forward;
pub mod log;
pub mod route;
pub mod steer;
#[cfg(test)]
mod steer_tests;
#[cfg(test)]
mod tests;
mod tls;

use crate::Error;
use forward::State;
use hyper_util::rt::{TokioExecutor, TokioIo};
use log::Log;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// What a proxy accepts and waits for, so that bad input costs bounded memory and time
/// (PROXY-4).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A request body (the API server's own limit is 3 MiB).
    pub request_body: usize,
    /// A whole answer that is not a watch (a list of a large cluster).
    pub response_body: usize,
    /// One watch event (etcd stores objects up to 1.5 MiB).
    pub watch_event: usize,
    /// How long the API server may take to answer (its headers, or a whole answer that is not a
    /// watch).
    pub answer: Duration,
    /// How long a controller may leave its watch stream unread.
    pub stalled_reader: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request_body: 8 << 20,
            response_body: 64 << 20,
            watch_event: 16 << 20,
            answer: Duration::from_secs(60),
            stalled_reader: Duration::from_secs(60),
        }
    }
}

/// The API server a proxy forwards to: its URL and the certificate authorities that sign its
/// serving certificate.
#[derive(Clone)]
pub struct Upstream {
    base: String,
    tls: Option<Arc<rustls::ClientConfig>>,
    authorities: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("base", &self.base)
            .finish()
    }
}

impl Upstream {
    /// The API server of `kubeconfig`'s current context (its server and certificate authority;
    /// its credentials are not read), or `url` with that authority.
    pub async fn from_kubeconfig(kubeconfig: &Path, url: Option<&str>) -> Result<Upstream, Error> {
        let at = |e: &dyn std::fmt::Display| Error::new(format!("{}: {e}", kubeconfig.display()));
        let file = kube::config::Kubeconfig::read_from(kubeconfig).map_err(|e| at(&e))?;
        let config =
            kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|e| at(&e))?;
        let base = url.map_or_else(|| config.cluster_url.to_string(), str::to_string);
        Upstream::new(&base, config.root_cert.as_deref().unwrap_or(&[]))
    }

    /// `url` (`https://HOST:PORT`, or `http://` without TLS), trusting the DER certificates
    /// `authorities` for its serving certificate.
    pub fn new(url: &str, authorities: &[Vec<u8>]) -> Result<Upstream, Error> {
        let base = url.trim_end_matches('/').to_string();
        let tls = if let Some(rest) = base.strip_prefix("https://") {
            if authorities.is_empty() {
                return Err(Error::new(format!(
                    "{url}: no certificate authority to check the API server's certificate by \
                     (the kubeconfig's `certificate-authority` or `certificate-authority-data`)"
                )));
            }
            let mut roots = rustls::RootCertStore::empty();
            for der in authorities {
                roots
                    .add(rustls::pki_types::CertificateDer::from(der.clone()))
                    .map_err(|e| Error::new(format!("{rest}: a certificate authority: {e}")))?;
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| Error::new(format!("TLS: {e}")))?
                .with_root_certificates(roots)
                .with_no_client_auth();
            Some(Arc::new(config))
        } else if base.starts_with("http://") {
            None
        } else {
            return Err(Error::new(format!(
                "--upstream {url}: Unsupported value: an https:// or http:// URL"
            )));
        };
        base.parse::<hyper::Uri>()
            .map_err(|e| Error::new(format!("--upstream {url}: Invalid value: {e}")))?;
        Ok(Upstream {
            base,
            tls,
            authorities: authorities.to_vec(),
        })
    }

    /// The API server's URL.
    pub fn url(&self) -> &str {
        &self.base
    }
}

/// A running proxy.
pub struct Proxy {
    addr: SocketAddr,
    state: Arc<State>,
    accept: JoinHandle<()>,
    authority_pem: String,
    authority_der: Vec<u8>,
}

impl Proxy {
    /// Listens on `listen` (`127.0.0.1:0` for any free port) and forwards to `upstream`,
    /// writing the exchange log at `log` and holding watch events as `schedule` says (PROXY-8).
    /// Runs on the current tokio runtime until [`Proxy::stop`].
    pub async fn start(
        upstream: Upstream,
        listen: SocketAddr,
        log: &Path,
        limits: Limits,
        schedule: Option<steer::Schedule>,
    ) -> Result<Proxy, Error> {
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|e| Error::new(format!("--listen {listen}: cannot listen: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::new(format!("--listen {listen}: {e}")))?;
        let identity = tls::identity()?;
        let steering = schedule.map(steer::Steering::new);
        let state = Arc::new(State::new(upstream, Log::create(log)?, limits, steering));
        let acceptor = tokio_rustls::TlsAcceptor::from(identity.server);
        let accept = tokio::spawn(accept(listener, acceptor, state.clone()));
        Ok(Proxy {
            addr,
            state,
            accept,
            authority_pem: identity.authority_pem,
            authority_der: identity.authority_der,
        })
    }

    /// The certificate authority of the proxy's serving certificate (PEM), made at its start.
    pub fn authority_pem(&self) -> &str {
        &self.authority_pem
    }

    /// The same authority in DER, for a rustls client.
    pub fn authority_der(&self) -> &[u8] {
        &self.authority_der
    }

    /// Where the proxy listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://ADDR`: the server a controller's kubeconfig names to go through the proxy.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The next `times` requests `verb` of `pod` (any pod: `None`; in the run's names) are
    /// answered `result` by the proxy itself (PROXY-10).
    pub fn fail(
        &self,
        verb: taintcheck_formats::trace::RequestVerb,
        pod: Option<taintcheck_core::api::PodKey>,
        times: u32,
        result: taintcheck_formats::trace::ResponseResult,
    ) {
        self.state.faults.arm(verb, pod, times, result);
    }

    /// Waits, as the schedule says, before the scenario's operations due at `at_ms` (on the
    /// scenario's clock) are played (PROXY-8, `operations`); at once without such a hold.
    pub async fn before_operations(&self, at_ms: u64) {
        let Some(steering) = &self.state.steering else {
            return;
        };
        if let Some(hold) = steering.holds_operations(at_ms) {
            steering.wait(hold, 0, &self.state.log).await;
        }
    }

    /// How many errors the proxy has logged so far (bad input, failures, limits).
    pub fn errors(&self) -> u64 {
        self.state.log.errors()
    }

    /// Stops listening and closes every connection (watches end for their clients); the log
    /// is complete then. An error if the log could not be written.
    pub fn stop(self) -> Result<(), Error> {
        self.accept.abort();
        self.state.close();
        self.state.unused_holds();
        match self.state.log.failure() {
            Some(e) => Err(Error::new(e)),
            None => Ok(()),
        }
    }
}

async fn accept(listener: TcpListener, acceptor: tokio_rustls::TlsAcceptor, state: Arc<State>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, say: wait rather than spin.
                state.log.error(0, &format!("accepting a connection: {e}"));
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let conn_state = state.clone();
        let acceptor = acceptor.clone();
        state.spawn(async move {
            let handshake = tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await;
            let stream = match handshake {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    conn_state
                        .log
                        .error(0, &format!("a TLS handshake failed: {e}"));
                    return;
                }
                Err(_) => {
                    let message = format!("a TLS handshake took over {} s", HANDSHAKE.as_secs());
                    conn_state.log.error(0, &message);
                    return;
                }
            };
            let state = conn_state.clone();
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, std::convert::Infallible>(forward::serve(state, req).await) }
            });
            // HTTP/2 or HTTP/1.1, as ALPN chose.
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// How long a client may take to finish its TLS handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// Writes at `out` a kubeconfig like `kubeconfig` whose clusters' server is the proxy at `url`,
/// trusted by its authority `authority_pem`, keeping the users' credentials: what a controller
/// runs with to go through the proxy.
pub fn kubeconfig_through(
    kubeconfig: &Path,
    url: &str,
    authority_pem: &str,
    out: &Path,
) -> Result<(), Error> {
    use base64::Engine;
    let mut config = kube::config::Kubeconfig::read_from(kubeconfig)
        .map_err(|e| Error::new(format!("{}: {e}", kubeconfig.display())))?;
    let authority = base64::engine::general_purpose::STANDARD.encode(authority_pem);
    for named in &mut config.clusters {
        if let Some(cluster) = named.cluster.as_mut() {
            cluster.server = Some(url.to_string());
            cluster.certificate_authority = None;
            cluster.certificate_authority_data = Some(authority.clone());
            cluster.insecure_skip_tls_verify = None;
            cluster.tls_server_name = None;
        }
    }
    let text = serde_json::to_string(&config)
        .map_err(|e| Error::new(format!("{}: {e}", kubeconfig.display())))?;
    std::fs::write(out, text)
        .map_err(|e| Error::new(format!("{}: cannot write: {e}", out.display())))
}
