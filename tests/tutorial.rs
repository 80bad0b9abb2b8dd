//! docs/tutorial.md runs as written: every `console` block's `$ taintcheck …` command is run in
//! docs/tutorial/, its exit code is the one the block's `# exit N` says (0 if none), and every
//! output line the block shows appears in the command's output, in order (lines with timings,
//! which vary, and `...` elisions excepted). `explore` serves until stopped: it is started on a
//! free port, its URL read and the server stopped. A `yaml` block that starts with
//! `# NAME` shows the file docs/tutorial/NAME exactly.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};

struct Block {
    line: usize,
    args: Vec<String>,
    exit: i32,
    expected: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        if line.trim() != "```console" {
            continue;
        }
        let (_, command) = lines.next().expect("a command after ```console");
        let command = command
            .strip_prefix("$ taintcheck ")
            .unwrap_or_else(|| panic!("tutorial.md:{}: not a taintcheck command", i + 2));
        let (command, exit) = match command.split_once("# exit ") {
            Some((c, e)) => (c, e.trim().parse().expect("an exit code")),
            None => (command, 0),
        };
        let expected = lines
            .by_ref()
            .map(|(_, l)| l)
            .take_while(|l| l.trim() != "```")
            .filter(|l| !l.trim().is_empty() && l.trim() != "..." && !l.contains("sec="))
            .map(|l| l.trim_end().to_owned())
            .collect();
        blocks.push(Block {
            line: i + 2,
            args: command.split_whitespace().map(str::to_owned).collect(),
            exit,
            expected,
        });
    }
    blocks
}

/// Runs a block's command; its exit code and its stdout then stderr.
fn run(block: &Block, dir: &PathBuf) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_taintcheck"));
    cmd.args(&block.args).current_dir(dir);
    if block.args[0] != "explore" {
        let o = cmd.output().expect("taintcheck runs");
        let text =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        return (o.status.code().unwrap_or(-1), text);
    }
    let mut child = cmd
        .args(["--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("explore starts");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("explore prints its URL");
    child.kill().expect("explore stops");
    child.wait().expect("explore exits");
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("stderr reads");
    // The port is the one the OS gave; the tutorial shows the default one.
    let port = url.split(':').nth(2).and_then(|p| p.split('/').next());
    let url = url.replacen(port.unwrap_or(""), "3000", 1);
    (0, err + &url)
}

#[test]
fn the_tutorial_runs_as_written() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/tutorial.md")).expect("docs/tutorial.md");
    let blocks = blocks(&text);
    assert!(blocks.len() >= 4, "the tutorial has its commands");
    let dir = root.join("docs/tutorial");
    for block in &blocks {
        let (code, output) = run(block, &dir);
        let at = format!("docs/tutorial.md:{}", block.line);
        assert_eq!(code, block.exit, "{at}: exit code\n{output}");
        let mut rest = output.lines().map(str::trim_end);
        for want in &block.expected {
            assert!(
                rest.any(|l| l == want),
                "{at}: {want:?} is not in the output (in order):\n{output}"
            );
        }
    }
}

#[test]
fn the_tutorial_shows_its_files_as_they_are() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/tutorial.md")).expect("docs/tutorial.md");
    let mut shown = 0;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```yaml" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let Some(name) = block.first().and_then(|l| l.strip_prefix("# ")) else {
            continue;
        };
        let Ok(file) = std::fs::read_to_string(root.join("docs/tutorial").join(name)) else {
            continue;
        };
        assert_eq!(
            block[1..].join("\n") + "\n",
            file,
            "docs/tutorial.md shows {name}"
        );
        shown += 1;
    }
    assert_eq!(shown, 2, "policy.yaml and expect.yaml are shown");
}
