//! The readable timeline `taintcheck run` prints and the corpus snapshots hold: one line per
//! trace record, time first, then who acted (`api`, `ctrl`, `note`) and what happened.

use taintcheck_formats::trace::{TraceEvent, TraceRecord};

/// Renders the records (the header is left out: the caller prints its own).
pub fn render(records: &[TraceRecord]) -> String {
    records.iter().filter_map(line).collect()
}

/// One record's line, newline included; none for the header.
pub fn line(r: &TraceRecord) -> Option<String> {
    (!matches!(r.event, TraceEvent::Header { .. }))
        .then(|| format!("{:>10}  {}\n", r.t.to_string(), r.event))
}
