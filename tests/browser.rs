//! The Explorer in a real browser: `taintcheck explore --property` on a free loopback port,
//! its page rendered by headless Chromium (`--dump-dom`), and the timeline's label boxes measured
//! by the browser's own layout.
//!
//! Without Chromium these tests pass and say on stderr that they did not run;
//! `TAINTCHECK_REQUIRE_BROWSER=1` (set by `.ci/run`) makes a missing browser a failure.
//! `TAINTCHECK_CHROMIUM` names the browser binary when it is not `chromium` on the PATH.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The browser, or `None` after saying plainly (uncaptured) that the test did not run.
fn chromium(test: &str) -> Option<PathBuf> {
    let named = std::env::var_os("TAINTCHECK_CHROMIUM").map(PathBuf::from);
    let found = named.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("TAINTCHECK_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "TAINTCHECK_REQUIRE_BROWSER=1 but no chromium on the PATH (apt-get install chromium)"
        );
        // Written to the stream itself: the test harness captures only `eprintln!`.
        let _ = writeln!(
            std::io::stderr(),
            "NOTE: browser test `{test}` NOT RUN: chromium not found \
             (apt-get install chromium, or set TAINTCHECK_CHROMIUM)"
        );
    }
    found
}

/// A fresh directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "taintcheck-browser-{}-{what}-{n}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `taintcheck explore`, killed when dropped.
struct Explorer {
    child: Child,
    /// The URL it printed.
    url: String,
}

impl Explorer {
    fn start(args: &[&str]) -> Explorer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
            .arg("explore")
            .args(args)
            .args(["--addr", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("taintcheck runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("explore prints its URL");
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "printed {url:?}");
        let explorer = Explorer { child, url };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(explorer.addr()).is_err() {
            assert!(Instant::now() < deadline, "explore did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        explorer
    }

    fn addr(&self) -> String {
        let rest = self.url.trim_start_matches("http://");
        rest.split('/').next().expect("host:port").to_string()
    }

    /// The action-index path in the URL (`0/3/1/...`).
    fn path(&self) -> Vec<usize> {
        let (_, path) = self
            .url
            .split_once("#/steps/")
            .expect("a counterexample URL");
        path.split('/')
            .map(|i| i.parse().expect("an index"))
            .collect()
    }

    /// `GET path` over plain HTTP/1.0: the body.
    fn get(&self, path: &str) -> String {
        let mut s = TcpStream::connect(self.addr()).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr()).unwrap();
        let mut buf = String::new();
        s.read_to_string(&mut buf).expect("a response");
        let (head, body) = buf.split_once("\r\n\r\n").expect("an HTTP response");
        assert!(
            head.starts_with("HTTP/1.1 200") || head.starts_with("HTTP/1.0 200"),
            "{head}"
        );
        body.to_string()
    }

    /// The timeline SVG the server draws for the whole counterexample.
    fn svg(&self) -> String {
        let path = self.path();
        let (last, prefix) = path.split_last().expect("a non-empty path");
        let prefix: Vec<String> = prefix.iter().map(ToString::to_string).collect();
        let body = self.get(&format!("/.states/{}", prefix.join("/")));
        let steps: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        let step = steps
            .as_array()
            .expect("next steps")
            .iter()
            .find(|s| s["actionIndex"].as_u64() == Some(*last as u64))
            .expect("the path's last action");
        step["svg"].as_str().expect("an svg").to_string()
    }
}

impl Drop for Explorer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Headless Chromium's DOM of `url` after its scripts ran, at `width` CSS pixels.
fn dump_dom(browser: &Path, url: &str, width: u32) -> String {
    let profile = TempDir::new("profile");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--window-size={width},1000"))
        .arg(format!("--user-data-dir={}", profile.0.display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 DOM")
}

/// The page a person opens from `check`'s output shows, without a click, the property, where it
/// goes wrong and the steps' instants.
#[test]
fn the_counterexample_page_names_the_property_and_the_violating_step() {
    let Some(browser) =
        chromium("the_counterexample_page_names_the_property_and_the_violating_step")
    else {
        return;
    };
    let explorer = Explorer::start(&[
        "--config",
        "timer-vs-cancel",
        "--profile",
        "latest",
        "--property",
        "CANCEL-1",
    ]);
    let steps = explorer.path().len() - 1;
    let dom = dump_dom(&browser, &explorer.url, 1600);
    assert!(
        dom.contains("tc-timeline"),
        "the timeline was not rendered: {dom}"
    );
    let verdict = format!("CANCEL-1 honest cancel is violated at step {steps}");
    assert!(
        dom.contains(&verdict),
        "no \"{verdict}\" in the page: {dom}"
    );
    assert!(
        dom.contains("No DELETE is issued or applied"),
        "no statement: {dom}"
    );
    assert!(
        dom.contains("profile latest, config timer-vs-cancel"),
        "{dom}"
    );
    // The violating step: its number in the lanes and its legend line, marked, and the path's
    // instants labelled on the axis.
    assert!(
        dom.contains("tc-step tc-violating"),
        "no violating step marked: {dom}"
    );
    assert!(dom.contains("← violates CANCEL-1"), "{dom}");
    for t in ["t=0ms", "t=1000ms"] {
        assert!(
            dom.contains(&format!(">{t}</text>")),
            "no time label {t}: {dom}"
        );
    }
    // The selected step's outcome text is the page's default view.
    assert!(dom.contains("api server"), "{dom}");
}

/// Measured by the browser: no two labels of the timeline overlap, none is cut by the picture's
/// edge, and the picture fits the page's width, on a wide and on a narrow page.
#[test]
fn timeline_labels_do_not_overlap_and_fit_the_page() {
    let Some(browser) = chromium("timeline_labels_do_not_overlap_and_fit_the_page") else {
        return;
    };
    let explorer = Explorer::start(&[
        "--config",
        "timer-vs-cancel",
        "--profile",
        "latest",
        "--property",
        "CANCEL-1",
    ]);
    let svg = explorer.svg();
    let dir = TempDir::new("page");
    let page = dir.0.join("timeline.html");
    std::fs::write(&page, format!("{PAGE_HEAD}{svg}{PAGE_TAIL}")).unwrap();
    for width in [1600, 800] {
        let dom = dump_dom(&browser, &format!("file://{}", page.display()), width);
        let (_, rest) = dom
            .split_once("<pre id=\"result\">")
            .expect("the script ran");
        let (result, _) = rest.split_once("</pre>").unwrap();
        let v: serde_json::Value = serde_json::from_str(&result.replace("&quot;", "\""))
            .unwrap_or_else(|e| panic!("{e}: {result}"));
        assert!(v["labels"].as_u64().unwrap() > 40, "at {width}px: {v}");
        assert_eq!(v["overlaps"], serde_json::json!([]), "at {width}px: {v}");
        assert_eq!(v["cut"], serde_json::json!([]), "at {width}px: {v}");
        assert_eq!(v["fits"], true, "at {width}px: {v}");
    }
}

const PAGE_HEAD: &str = r#"<!DOCTYPE html><html><head><meta charset="utf-8"></head>
<body style="margin:0;padding:8px"><div id="picture">"#;

/// Measures every label box (`text.tc-label`) with `getBoundingClientRect`.
const PAGE_TAIL: &str = r#"</div><script>
const svg = document.querySelector('#picture svg');
const frame = svg.getBoundingClientRect();
const boxes = [...svg.querySelectorAll('text.tc-label')]
  .map(t => ({ text: t.textContent, r: t.getBoundingClientRect() }));
const overlaps = [];
for (let i = 0; i < boxes.length; i++) {
  for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].r, b = boxes[j].r;
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 0.5 && h > 0.5) overlaps.push([boxes[i].text, boxes[j].text]);
  }
}
const cut = boxes.filter(({ r }) => r.left < frame.left - 0.5 || r.right > frame.right + 0.5
  || r.top < frame.top - 0.5 || r.bottom > frame.bottom + 0.5).map(b => b.text);
const fits = frame.right <= window.innerWidth + 0.5;
const pre = document.createElement('pre');
pre.id = 'result';
pre.textContent = JSON.stringify({ labels: boxes.length, overlaps, cut, fits,
  width: frame.width, page: window.innerWidth });
document.body.appendChild(pre);
</script></body></html>"#;

/// `explore --property` opens at the path `check` prints for that property (no browser needed).
#[test]
fn explore_prints_the_url_of_checks_shortest_counterexample() {
    let check = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
        .args([
            "check",
            "--config",
            "timer-vs-cancel",
            "--profile",
            "v1.18",
            "--json",
        ])
        .output()
        .expect("taintcheck runs");
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).expect("JSON report");
    for id in ["CANCEL-1", "EVICT-1"] {
        let property = report["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"].as_str().unwrap().starts_with(id))
            .expect("the property is reported");
        let path = property["counterexample"]["action_path"]
            .as_str()
            .unwrap_or_else(|| panic!("{id} violated on v1.18: {property}"));
        let explorer = Explorer::start(&[
            "--config",
            "timer-vs-cancel",
            "--profile",
            "v1.18",
            "--property",
            id,
        ]);
        assert!(
            explorer.url.ends_with(&format!("/#/steps/{path}")),
            "{id}: explore printed {}, check found {path}",
            explorer.url
        );
        // The server draws the timeline about that property.
        let svg = explorer.svg();
        assert!(svg.contains(&format!(">{id} ")), "{svg}");
        assert!(svg.contains("is violated at step"), "{svg}");
    }
}

/// A property that cannot have a counterexample, or no property at all, is a usage error.
#[test]
fn explore_property_must_name_an_always_property() {
    for (arg, says) in [
        ("SOME-3", "is a `sometimes` property"),
        ("NOPE-1", "supported values: \"EVICT-1\""),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
            .args(["explore", "--config", "timer-vs-cancel", "--property", arg])
            .output()
            .expect("taintcheck runs");
        assert_eq!(o.status.code(), Some(2), "{arg}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("taintcheck: --property: "), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(o.stdout.is_empty());
    }
}
