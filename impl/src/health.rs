//! `/healthz` and `/metrics` over plain HTTP/1.1, one short request per connection, on the
//! address given (127.0.0.1 by default). A request has 2 s and 8 KiB to arrive; anything else
//! is refused without reading further. Spec: RT-WORLD-6.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// What the server answers.
pub trait Status: Send + Sync {
    /// `Ok(())` if healthy, else why not.
    fn health(&self) -> Result<(), String>;
    /// The Prometheus text exposition.
    fn metrics(&self) -> String;
}

/// Binds `addr` and serves on a thread of its own; returns the bound address.
pub fn serve(addr: SocketAddr, status: Arc<dyn Status>) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(addr)?;
    let bound = listener.local_addr()?;
    std::thread::Builder::new()
        .name("health".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = answer(stream, status.as_ref());
            }
        })?;
    Ok(bound)
}

const LIMIT: usize = 8 * 1024;

fn answer(mut stream: TcpStream, status: &dyn Status) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk)?;
        if n == 0 || buf.len() + n > LIMIT {
            respond(&mut stream, 400, "bad request\n")?;
            // Closing with unread input would reset the connection before the answer is read.
            let _ = stream.shutdown(std::net::Shutdown::Write);
            let _ = std::io::copy(&mut (&stream).take(64 * 1024), &mut std::io::sink());
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let line = String::from_utf8_lossy(&buf);
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" {
        return respond(&mut stream, 405, "method not allowed\n");
    }
    match path {
        "/healthz" | "/readyz" | "/livez" => match status.health() {
            Ok(()) => respond(&mut stream, 200, "ok\n"),
            Err(why) => respond(&mut stream, 500, &format!("{why}\n")),
        },
        "/metrics" => respond(&mut stream, 200, &status.metrics()),
        _ => respond(&mut stream, 404, "not found\n"),
    }
}

fn respond(stream: &mut TcpStream, code: u16, body: &str) -> std::io::Result<()> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    };
    write!(
        stream,
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; version=0.0.4\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Result<(), String>);

    impl Status for Fixed {
        fn health(&self) -> Result<(), String> {
            self.0.clone()
        }
        fn metrics(&self) -> String {
            "m 1\n".into()
        }
    }

    fn get(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn health_metrics_and_refusals() {
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let ok = serve(local, Arc::new(Fixed(Ok(())))).unwrap();
        assert!(get(ok, b"GET /healthz HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
        assert!(get(ok, b"GET /metrics HTTP/1.1\r\n\r\n").ends_with("\r\n\r\nm 1\n"));
        assert!(get(ok, b"GET /x HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(ok, b"POST /healthz HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        let huge = vec![b'a'; LIMIT + 1000];
        assert!(get(ok, &huge).starts_with("HTTP/1.1 400"));
        let sick = serve(local, Arc::new(Fixed(Err("watch of pods: down".into())))).unwrap();
        let out = get(sick, b"GET /healthz HTTP/1.1\r\n\r\n");
        assert!(
            out.starts_with("HTTP/1.1 500") && out.ends_with("watch of pods: down\n"),
            "{out}"
        );
    }
}
