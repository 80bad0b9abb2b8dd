//! The Explorer serves the model: `/.status`, a counterexample's path under `/.states/...`, and
//! the SVG timeline. `serve()` blocks forever, so it runs in a background thread on an ephemeral
//! loopback port; the test talks plain HTTP/1.0 to it, with bounded retries.

use stateright::Model;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};
use taintcheck_core::profile::Profile;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::TaintSys;

fn http(addr: &str, method: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n"
    )
    .ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    let status = buf.split_whitespace().nth(1)?.parse().ok()?;
    let body = buf.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((status, body))
}

#[test]
fn explorer_serves_status_a_counterexample_path_and_its_svg() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("an ephemeral port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let model = TaintSys::new(
        Profile::latest(),
        CheckConfig::builtin("timer-vs-cancel").unwrap(),
    );
    let serve_addr = addr.clone();
    std::thread::spawn(move || {
        model.checker().serve(serve_addr.as_str());
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some((200, body)) = http(&addr, "GET", "/.status") {
            break body;
        }
        assert!(Instant::now() < deadline, "explorer did not come up");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.contains("unique_state_count"), "{status}");
    http(&addr, "POST", "/.runtocompletion").expect("run to completion");
    let path = loop {
        let (_, body) = http(&addr, "GET", "/.status").expect("status");
        let v: serde_json::Value = serde_json::from_str(&body).expect("status is JSON");
        let found = v["properties"].as_array().and_then(|ps| {
            ps.iter().find_map(|p| {
                let name = p[1].as_str()?;
                let path = p[2].as_str()?;
                name.starts_with("CANCEL-1").then(|| path.to_string())
            })
        });
        if let Some(path) = found {
            break path;
        }
        assert!(Instant::now() < deadline, "no CANCEL-1 discovery: {body}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let path = path.trim_start_matches('#').trim_start_matches("/steps");
    let prefix: Vec<&str> = path.trim_matches('/').split('/').collect();
    assert!(prefix.len() > 2, "{path}");
    let (status, body) = http(
        &addr,
        "GET",
        &format!("/.states/{}", prefix[..prefix.len() - 1].join("/")),
    )
    .expect("states");
    assert_eq!(status, 200, "{body}");
    let steps: serde_json::Value = serde_json::from_str(&body).expect("steps are JSON");
    let steps = steps.as_array().expect("an array of next steps");
    assert!(!steps.is_empty());
    let svg = steps[0]["svg"].as_str().expect("an svg");
    assert!(
        svg.starts_with("<svg") && svg.contains("api server"),
        "{svg}"
    );
    assert!(steps
        .iter()
        .any(|s| s["action"].as_str().is_some_and(|a| !a.is_empty())));
    let (status, _) = http(&addr, "GET", "/.states/0/999999").expect("bad index");
    assert_eq!(status, 404);
}
