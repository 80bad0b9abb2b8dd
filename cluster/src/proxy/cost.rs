//! What the proxy costs a controller, as `taintcheck bench proxy` measures it, side by side in
//! one run: the latency a request gains through the proxy (the same GET sent directly and
//! through the proxy in turn, one HTTP/2 client each, as client-go), and how many watch events a
//! second a reader takes through it from an API server stand-in that streams them as fast as it
//! can, against the same stream read directly.

use super::{Limits, Proxy, Upstream};
use crate::Error;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A client trusting `authorities` (DER), HTTP/2 or HTTP/1.1 by ALPN; `http://` URLs too.
fn client(authorities: &[&[u8]]) -> Result<HttpsClient, Error> {
    let mut roots = rustls::RootCertStore::empty();
    for der in authorities {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.to_vec()))
            .map_err(|e| Error::new(format!("a certificate authority: {e}")))?;
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| Error::new(format!("TLS: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

/// Latencies of one GET, directly and through the proxy, in microseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    /// Requests each way (after as many again to warm up).
    pub requests: usize,
    pub direct_p50_us: u64,
    pub direct_p99_us: u64,
    pub proxy_p50_us: u64,
    pub proxy_p99_us: u64,
}

/// Sends `path` with the bearer `token` `requests` times directly to `upstream` and as often
/// through a proxy to it, in turn, and reports both distributions. The proxy logs to `log`.
pub async fn latency(
    upstream: &Upstream,
    token: &str,
    path: &str,
    requests: usize,
    log: &Path,
) -> Result<Latency, Error> {
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let proxy = Proxy::start(upstream.clone(), any, log, Limits::default(), None).await?;
    let roots: Vec<&[u8]> = upstream.authorities.iter().map(Vec::as_slice).collect();
    let direct = client(&roots)?;
    let through = client(&[proxy.authority_der()])?;
    let (mut times_direct, mut times_proxy) = (Vec::new(), Vec::new());
    for i in 0..2 * requests {
        for (client, base, times) in [
            (&direct, upstream.url().to_string(), &mut times_direct),
            (&through, proxy.url(), &mut times_proxy),
        ] {
            let request = Request::get(format!("{base}{path}"))
                .header("authorization", format!("Bearer {token}"))
                .header("accept", "application/json")
                .body(Full::new(Bytes::new()))
                .map_err(|e| Error::new(format!("{path}: {e}")))?;
            let begun = Instant::now();
            let answer = client
                .request(request)
                .await
                .map_err(|e| Error::new(format!("GET {base}{path}: {e}")))?;
            let status = answer.status();
            answer
                .into_body()
                .collect()
                .await
                .map_err(|e| Error::new(format!("GET {base}{path}: {e}")))?;
            if !status.is_success() {
                return Err(Error::new(format!("GET {base}{path}: {status}")));
            }
            if i >= requests {
                times.push(begun.elapsed());
            }
        }
    }
    proxy.stop()?;
    let (direct_p50_us, direct_p99_us) = percentiles(&mut times_direct);
    let (proxy_p50_us, proxy_p99_us) = percentiles(&mut times_proxy);
    Ok(Latency {
        requests,
        direct_p50_us,
        direct_p99_us,
        proxy_p50_us,
        proxy_p99_us,
    })
}

fn percentiles(times: &mut [Duration]) -> (u64, u64) {
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 * q).ceil() as usize).clamp(1, times.len().max(1)) - 1;
        times.get(i).map_or(0, |d| d.as_micros() as u64)
    };
    (at(0.50), at(0.99))
}

/// Watch events a second, read directly and through the proxy.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    pub events: usize,
    /// The size of one event (a pod with a toleration, as JSON).
    pub event_bytes: usize,
    pub direct_events_per_s: f64,
    pub proxy_events_per_s: f64,
}

/// An API server stand-in that answers any request with a watch of `events` copies of `event`
/// as fast as the reader takes them.
async fn stream_server(event: Bytes, events: usize) -> Result<String, Error> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| Error::new(format!("a stand-in API server: {e}")))?;
    let url = format!(
        "http://{}",
        listener
            .local_addr()
            .map_err(|e| Error::new(e.to_string()))?
    );
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let event = event.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json;stream=watch\r\n\
                            Connection: close\r\n\r\n";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                // Sixteen events a write, as an API server's buffered writer sends them.
                let batch: Vec<u8> = event
                    .iter()
                    .copied()
                    .cycle()
                    .take(event.len() * 16)
                    .collect();
                for _ in 0..events / 16 {
                    if stream.write_all(&batch).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    Ok(url)
}

/// Reads a watch of `events` events from a stand-in directly and through a proxy that logs to
/// `log`, and reports events a second each way.
pub async fn watch_throughput(events: usize, log: &Path) -> Result<Throughput, Error> {
    let event = serde_json::json!({"type": "MODIFIED", "object": {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web-0", "namespace": "shop", "uid": "u1", "resourceVersion": "7",
                     "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": "web"}},
        "spec": {"nodeName": "node1", "containers": [{"name": "c", "image": "nginx"}],
                 "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Running"},
    }});
    let event = Bytes::from(format!("{event}\n"));
    let events = events / 16 * 16;
    let url = stream_server(event.clone(), events).await?;
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let proxy = Proxy::start(Upstream::new(&url, &[])?, any, log, Limits::default(), None).await?;
    let direct = client(&[])?;
    let through = client(&[proxy.authority_der()])?;
    let mut rates = Vec::new();
    for (client, base) in [(&direct, url.clone()), (&through, proxy.url())] {
        let request = Request::get(format!("{base}/api/v1/pods?watch=true"))
            .body(Full::new(Bytes::new()))
            .map_err(|e| Error::new(e.to_string()))?;
        let begun = Instant::now();
        let answer = client
            .request(request)
            .await
            .map_err(|e| Error::new(format!("{base}: {e}")))?;
        let got = answer
            .into_body()
            .collect()
            .await
            .map_err(|e| Error::new(format!("{base}: {e}")))?
            .to_bytes();
        let seconds = begun.elapsed().as_secs_f64();
        if got.len() != events * event.len() {
            return Err(Error::new(format!(
                "{base}: {} bytes of {} read",
                got.len(),
                events * event.len()
            )));
        }
        rates.push(events as f64 / seconds);
    }
    proxy.stop()?;
    Ok(Throughput {
        events,
        event_bytes: event.len(),
        direct_events_per_s: rates[0],
        proxy_events_per_s: rates[1],
    })
}
