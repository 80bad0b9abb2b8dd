//! The Explorer's timeline picture of a path: a header with the property it explains, lanes over
//! the model's clock, and a numbered legend with every step's outcome.
//!
//! Layout rules that keep it readable at any path length: the x-axis is the model clock cut into
//! one band per instant (labelled once, wide enough for its label), the steps of an instant spread
//! evenly within its band at no less than [`STEP_W`] apart, and the marks in the lanes carry no
//! text; the words go to the legend below, wrapped to the picture's width. The picture scales to
//! its container (`viewBox`, width 100%). Nothing here decides anything.

use super::super::action::Action;
use super::super::outcome::Outcome;
use std::fmt::Write;
use taintcheck_core::time::Time;
use taintcheck_core::{Effect, EventKind, Note, Step};

/// Font size of the lanes, the axis and the legend (px, monospace).
const FONT: f64 = 12.0;
/// A conservative advance of one monospace character at [`FONT`] (DejaVu Sans Mono is 0.602 em).
const CHAR_W: f64 = FONT * 0.62;
/// The least distance between two steps' centres: room for a three-digit step number.
const STEP_W: f64 = 30.0;
/// Where the lanes start (the lane names sit left of it).
const LEFT: f64 = 104.0;
/// The picture's least width, so that a short path does not make huge letters.
const MIN_W: f64 = 960.0;
const MARGIN: f64 = 10.0;
const LINE_H: f64 = 16.0;
const LANE_H: f64 = 30.0;

/// What the picture explains about the path: one line per property worth naming.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The property's name (`CANCEL-1 honest cancel`).
    pub name: &'static str,
    /// Its statement from the spec (empty: not shown).
    pub statement: String,
    /// The step (numbered from 1) whose state first violates it; `Some(0)`: the initial state.
    pub violated_at: Option<usize>,
}

/// One step of the path, as the picture needs it.
pub struct StepView<'a> {
    /// The clock when the step is taken.
    pub now: Time,
    /// The action.
    pub action: &'a Action,
    /// What it did (`None`: not enabled, which a replayed path never is).
    pub outcome: Option<Outcome>,
    /// The step in words: the same text as `check` prints.
    pub text: String,
    /// The step removed a pod object from the API server (a DELETE applied, or the
    /// environment's delete or recreate).
    pub deletes: bool,
}

/// Everything the picture shows.
pub struct Picture<'a> {
    /// The first header line (profile and configuration).
    pub title: String,
    /// The properties explained, the one asked about first.
    pub verdicts: Vec<Verdict>,
    /// The path's steps, in order.
    pub steps: Vec<StepView<'a>>,
}

/// The lanes, top to bottom.
const LANES: [&str; 6] = [
    "environment",
    "informers",
    "controller",
    "timers",
    "api server",
    "events",
];
const ENV: usize = 0;
const INFORMERS: usize = 1;
const CONTROLLER: usize = 2;
const TIMERS: usize = 3;
const API: usize = 4;
const EVENTS: usize = 5;

/// A mark's look: colour, shape, and what the key calls it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    Env,
    Clock,
    Delivery,
    Controller,
    Decision,
    TimerArmed,
    TimerFired,
    TimerStopped,
    Request,
    Answer,
    Deleted,
    Marking,
    Cancelling,
}

impl Mark {
    const ALL: [Mark; 13] = [
        Mark::Env,
        Mark::Clock,
        Mark::Delivery,
        Mark::Controller,
        Mark::Decision,
        Mark::TimerArmed,
        Mark::TimerFired,
        Mark::TimerStopped,
        Mark::Request,
        Mark::Answer,
        Mark::Deleted,
        Mark::Marking,
        Mark::Cancelling,
    ];

    fn colour(self) -> &'static str {
        match self {
            Mark::Env => "#555555",
            Mark::Clock => "#999999",
            Mark::Delivery => "#1f77b4",
            Mark::Controller => "#2ca02c",
            Mark::Decision => "#8c564b",
            Mark::TimerArmed | Mark::TimerFired => "#17becf",
            Mark::TimerStopped => "#ff7f0e",
            Mark::Request => "#7f7f7f",
            Mark::Answer => "#bcbd22",
            Mark::Deleted => "#d62728",
            Mark::Marking => "#9467bd",
            Mark::Cancelling => "#ff7f0e",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mark::Env => "environment",
            Mark::Clock => "clock advances",
            Mark::Delivery => "delivery",
            Mark::Controller => "controller step",
            Mark::Decision => "decision",
            Mark::TimerArmed => "timer armed",
            Mark::TimerFired => "timer fired",
            Mark::TimerStopped => "timer stopped",
            Mark::Request => "request sent",
            Mark::Answer => "answer",
            Mark::Deleted => "pod deleted",
            Mark::Marking => "Marking for deletion",
            Mark::Cancelling => "Cancelling deletion",
        }
    }

    /// The shape at (x, y): filled circles, hollow for "armed", squares for the API, a
    /// diamond for events, a cross for stopping.
    fn draw(self, svg: &mut String, x: f64, y: f64) {
        let c = self.colour();
        let _ = match self {
            Mark::TimerArmed => write!(
                svg,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="4.5" fill="white" stroke="{c}" stroke-width="2"/>"#
            ),
            Mark::TimerStopped => write!(
                svg,
                r#"<path d="M{:.1} {:.1}l9 9m0 -9l-9 9" stroke="{c}" stroke-width="2.5"/>"#,
                x - 4.5,
                y - 4.5
            ),
            Mark::Request | Mark::Answer | Mark::Deleted => write!(
                svg,
                r#"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{c}"/>"#,
                x - 5.0,
                y - 5.0
            ),
            Mark::Marking | Mark::Cancelling => write!(
                svg,
                r#"<path d="M{x:.1} {:.1}l6 6l-6 6l-6 -6z" fill="{c}"/>"#,
                y - 6.0
            ),
            _ => write!(svg, r#"<circle cx="{x:.1}" cy="{y:.1}" r="5" fill="{c}"/>"#),
        };
    }
}

/// The marks a step leaves, lane by lane.
fn marks(step: &StepView<'_>) -> Vec<(usize, Mark)> {
    let mut out = vec![match step.action {
        Action::Env(_) => (ENV, Mark::Env),
        Action::Tick(_) => (ENV, Mark::Clock),
        Action::InformerDeliverNode | Action::InformerDeliverPod => (INFORMERS, Mark::Delivery),
        Action::Controller(Step::FireTimer(_)) => (TIMERS, Mark::TimerFired),
        Action::Controller(_) => (CONTROLLER, Mark::Controller),
        Action::ApiRespond(_) => (API, Mark::Answer),
    }];
    if step.deletes {
        out.push((API, Mark::Deleted));
    }
    for e in step.outcome.iter().flat_map(|o| &o.effects) {
        out.push(match e {
            Effect::Event(ev) => match ev.kind {
                EventKind::MarkingForDeletion => (EVENTS, Mark::Marking),
                EventKind::CancellingDeletion => (EVENTS, Mark::Cancelling),
            },
            Effect::Api(_) => (API, Mark::Request),
            Effect::ArmTimer { .. } => (TIMERS, Mark::TimerArmed),
            Effect::CancelTimer { .. } => (TIMERS, Mark::TimerStopped),
            Effect::Decision(d) => match d.note {
                Note::ZeroTaints => (CONTROLLER, Mark::Deleted),
                _ => (CONTROLLER, Mark::Decision),
            },
        });
    }
    out
}

/// XML-escapes text.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `text` cut into lines of at most `cols` characters at spaces (a longer word is split);
/// continuation lines get `indent` leading spaces.
fn wrap(text: &str, cols: usize, indent: usize) -> Vec<String> {
    let cols = cols.max(indent + 8);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        loop {
            let len = line.chars().count();
            let room = cols.saturating_sub(len + usize::from(len > 0 && !line.ends_with(' ')));
            let wlen = word.chars().count();
            if wlen <= room {
                if len > 0 && !line.ends_with(' ') {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if len > indent {
                lines.push(std::mem::replace(&mut line, " ".repeat(indent)));
                continue;
            }
            // A word longer than a whole line: split it.
            let head: String = word.chars().take(room.max(1)).collect();
            word = word.chars().skip(room.max(1)).collect();
            line.push_str(&head);
            lines.push(std::mem::replace(&mut line, " ".repeat(indent)));
        }
    }
    if line.trim().is_empty() {
        if lines.is_empty() {
            lines.push(String::new());
        }
    } else {
        lines.push(line);
    }
    lines
}

/// A band of the x-axis: one instant, the steps taken at it.
struct Band {
    now: Time,
    count: usize,
    x: f64,
    w: f64,
}

fn time_label(t: Time) -> String {
    format!("t={}ms", t.0)
}

/// The bands in path order, laid out from [`LEFT`].
fn bands(steps: &[StepView<'_>]) -> Vec<Band> {
    let mut bands: Vec<Band> = Vec::new();
    for s in steps {
        match bands.last_mut() {
            Some(b) if b.now == s.now => b.count += 1,
            _ => bands.push(Band {
                now: s.now,
                count: 1,
                x: 0.0,
                w: 0.0,
            }),
        }
    }
    let mut x = LEFT;
    for b in &mut bands {
        let label = time_label(b.now).chars().count() as f64 * CHAR_W + 16.0;
        b.x = x;
        b.w = label.max(STEP_W * b.count as f64);
        x += b.w;
    }
    bands
}

/// The picture as an SVG document.
pub fn svg(p: &Picture<'_>) -> String {
    let mut bands = bands(&p.steps);
    let needed = bands.last().map_or(0.0, |b| b.x + b.w - LEFT);
    let w = (LEFT + needed + MARGIN).max(MIN_W);
    // A short path spreads over the whole width: bands grow in proportion.
    let lanes_w = w - LEFT - MARGIN;
    if needed > 0.0 {
        let scale = lanes_w / needed;
        for b in &mut bands {
            b.x = LEFT + (b.x - LEFT) * scale;
            b.w *= scale;
        }
    }
    // A few characters to spare: glyphs from a fallback font (arrows) may be wider.
    let cols = ((w - 2.0 * MARGIN) / CHAR_W).floor() as usize - 3;
    // Each step's centre and the width it has.
    let xs: Vec<(f64, f64)> = bands
        .iter()
        .flat_map(|b| {
            let step = b.w / b.count as f64;
            (0..b.count).map(move |k| (b.x + step * (k as f64 + 0.5), step))
        })
        .collect();

    let mut body = String::new();
    let mut y = MARGIN;

    // Header: title, then each verdict; the first (the property asked about) with its statement.
    y += LINE_H;
    text_line(&mut body, MARGIN, y, &p.title, "bold", "#142b46", "header");
    for (i, v) in p.verdicts.iter().enumerate() {
        let (verdict, colour) = match v.violated_at {
            Some(0) => (" is violated in the initial state".to_string(), "#d62728"),
            Some(n) => (format!(" is violated at step {n}"), "#d62728"),
            None => (" holds along this path".to_string(), "#2ca02c"),
        };
        for line in wrap(&format!("{}{verdict}", v.name), cols, 2) {
            y += LINE_H;
            text_line(&mut body, MARGIN, y, &line, "bold", colour, "verdict");
        }
        if i == 0 && !v.statement.is_empty() {
            for line in wrap(&v.statement, cols, 0) {
                y += LINE_H;
                text_line(
                    &mut body,
                    MARGIN,
                    y,
                    &line,
                    "normal",
                    "#333333",
                    "statement",
                );
            }
        }
    }
    if p.verdicts.is_empty() {
        y += LINE_H;
        let line = format!(
            "No property is violated along these {} steps",
            p.steps.len()
        );
        text_line(&mut body, MARGIN, y, &line, "bold", "#2ca02c", "verdict");
    }

    // The axis: one shaded band per instant, its label once.
    y += LINE_H;
    let axis_y = y + LINE_H;
    let numbers_y = axis_y + LINE_H;
    let lanes_top = numbers_y + 6.0;
    let lanes_bottom = lanes_top + LANE_H * LANES.len() as f64;
    for (i, b) in bands.iter().enumerate() {
        let shade = if i % 2 == 0 { "#eef2f6" } else { "#ffffff" };
        let _ = write!(
            body,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{shade}"/>"#,
            b.x,
            y,
            b.w,
            lanes_bottom - y
        );
        let label = time_label(b.now);
        let _ = write!(
            body,
            r##"<text class="tc-label tc-time" x="{:.1}" y="{axis_y:.1}" text-anchor="middle" font-weight="bold" fill="#142b46">{}</text>"##,
            b.x + b.w / 2.0,
            esc(&label)
        );
    }
    // The violating steps, behind the marks.
    let violating: Vec<usize> = p
        .verdicts
        .iter()
        .filter_map(|v| v.violated_at)
        .filter(|&n| n > 0 && n <= p.steps.len())
        .collect();
    for &n in &violating {
        let _ = write!(
            body,
            r##"<rect class="tc-violation" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#d62728" fill-opacity="0.18" stroke="#d62728"/>"##,
            xs[n - 1].0 - xs[n - 1].1.min(2.0 * STEP_W) / 2.0 + 2.0,
            axis_y + 4.0,
            xs[n - 1].1.min(2.0 * STEP_W) - 4.0,
            lanes_bottom - axis_y - 4.0
        );
    }
    // Lanes.
    for (i, lane) in LANES.iter().enumerate() {
        let ly = lanes_top + LANE_H * (i as f64 + 0.5);
        let _ = write!(
            body,
            r##"<line x1="{LEFT}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="#cccccc"/>"##,
            LEFT + lanes_w
        );
        text_line(
            &mut body,
            MARGIN,
            ly + FONT / 3.0,
            lane,
            "bold",
            "#142b46",
            "lane",
        );
    }
    // Step numbers and marks.
    for (i, (step, &(x, _))) in p.steps.iter().zip(&xs).enumerate() {
        let n = i + 1;
        let bad = violating.contains(&n);
        let _ = write!(
            body,
            r#"<text class="tc-label tc-step{}" x="{x:.1}" y="{numbers_y:.1}" text-anchor="middle" font-size="10" fill="{}" font-weight="{}">{n}</text>"#,
            if bad { " tc-violating" } else { "" },
            if bad { "#d62728" } else { "#142b46" },
            if bad { "bold" } else { "normal" },
        );
        let mut per_lane = [0usize; LANES.len()];
        for (lane, mark) in marks(step) {
            let k = per_lane[lane];
            per_lane[lane] += 1;
            // Up to three marks of one step in one lane, side by side then above and below.
            let dy = [0.0, -8.0, 8.0][k.min(2)];
            let dx = if k > 2 { 6.0 } else { 0.0 };
            mark.draw(
                &mut body,
                x + dx,
                lanes_top + LANE_H * (lane as f64 + 0.5) + dy,
            );
        }
    }

    // The key of the marks, laid out left to right by its text's width.
    y = lanes_bottom + LINE_H + 4.0;
    let mut kx = MARGIN;
    for mark in Mark::ALL {
        let width = 16.0 + mark.name().chars().count() as f64 * CHAR_W + 14.0;
        if kx + width > w - MARGIN {
            kx = MARGIN;
            y += LINE_H + 2.0;
        }
        mark.draw(&mut body, kx + 6.0, y - FONT / 3.0);
        text_line(
            &mut body,
            kx + 16.0,
            y,
            mark.name(),
            "normal",
            "#333333",
            "key",
        );
        kx += width;
    }

    // The legend: every step in words, the violating ones in red.
    y += LINE_H * 0.5;
    for (i, step) in p.steps.iter().enumerate() {
        let n = i + 1;
        let bad = violating.contains(&n);
        let mut text = format!("{n}. {}  {}", time_label(step.now), step.text);
        for v in p.verdicts.iter().filter(|v| v.violated_at == Some(n)) {
            let id = v.name.split(' ').next().unwrap_or(v.name);
            let _ = write!(text, "  ← violates {id}");
        }
        let indent = 4;
        for line in wrap(&text, cols, indent) {
            y += LINE_H;
            let (weight, colour, class) = if bad {
                ("bold", "#d62728", "legend tc-violating")
            } else {
                ("normal", "#142b46", "legend")
            };
            text_line(&mut body, MARGIN, y, &line, weight, colour, class);
        }
    }
    let h = y + MARGIN;

    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="tc-timeline" viewBox="0 0 {w:.0} {h:.0}" width="100%" style="max-width:100%;height:auto;display:block" font-family="DejaVu Sans Mono, monospace" font-size="{FONT}">"#
    );
    let _ = write!(
        svg,
        r##"<rect x="0" y="0" width="{w:.0}" height="{h:.0}" rx="6" fill="#ffffff"/>"##
    );
    svg.push_str(&body);
    svg.push_str("</svg>");
    svg
}

/// One line of text at (x, y) with a class the browser tests find it by.
fn text_line(
    svg: &mut String,
    x: f64,
    y: f64,
    text: &str,
    weight: &str,
    colour: &str,
    class: &str,
) {
    // Leading spaces (a wrapped line's indent) become an offset: browsers collapse them.
    let trimmed = text.trim_start_matches(' ');
    let x = x + (text.len() - trimmed.len()) as f64 * CHAR_W;
    let _ = write!(
        svg,
        r#"<text class="tc-label tc-{class}" x="{x:.1}" y="{y:.1}" font-weight="{weight}" fill="{colour}">{}</text>"#,
        esc(trimmed)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_every_word_and_the_width() {
        let text = "worker 0 handles node n1: taints [k:NoExecute] for pod default/p1 → \
                    schedule eviction of default/p1 at 2000ms; arm timer #1 for 2000ms";
        let lines = wrap(text, 40, 6);
        assert!(lines.len() > 2, "{lines:?}");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        assert!(
            lines[1..].iter().all(|l| l.starts_with("      ")),
            "{lines:?}"
        );
        let words: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
    }

    #[test]
    fn wrap_splits_a_word_longer_than_a_line() {
        let lines = wrap(&"x".repeat(25), 10, 0);
        assert_eq!(lines, vec!["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
    }
}
