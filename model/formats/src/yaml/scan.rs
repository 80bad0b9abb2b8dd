//! The input limits of a YAML text, checked on the parser's event stream before any tree is
//! built: nesting depth, nodes (aliases counted as the nodes they expand to) and items per list.
//! Building the tree and every walk over it recurse once per level, so a 20,000-deep document
//! must be refused here, where nothing recurses.

use super::LoadError;
use crate::field::FieldPath;
use crate::limits::{self, Limit};
use saphyr_parser::{Event, Parser};
use std::collections::HashMap;

/// One open collection.
struct Open {
    path: FieldPath,
    /// Items so far (a list), or entries' keys and values so far (a mapping).
    children: usize,
    is_list: bool,
    /// The last key read, while its value is pending (a mapping).
    key: Option<String>,
    /// Node count when it opened, and its anchor: an alias to it expands to the difference.
    start: usize,
    anchor: usize,
}

/// Refuses `text` past a limit, naming the line and the field path; a syntax error is left to
/// the loader, which reports it the same way.
pub(super) fn check(text: &str) -> Result<(), LoadError> {
    let max_depth = limits::YAML_DEPTH.get();
    let max_nodes = limits::YAML_NODES.get();
    let max_items = limits::LIST_ITEMS.get();
    let mut open: Vec<Open> = Vec::new();
    let mut nodes = 0usize;
    let mut anchors: HashMap<usize, usize> = HashMap::new();
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else {
            return Ok(());
        };
        let line = span.start.line();
        let fail = |path: &FieldPath, limit: &Limit, n: usize| {
            let at = if path.segments().is_empty() {
                String::new()
            } else {
                format!("{}: ", limits::shorten(&path.to_string()))
            };
            Err(LoadError {
                line,
                message: format!("{at}{}", limit.too_many(n)),
            })
        };
        let (size, anchor, opens) = match &event {
            Event::Scalar(_, _, anchor, _) => (1, *anchor, false),
            Event::Alias(id) => (anchors.get(id).copied().unwrap_or(1), 0, false),
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => (1, *anchor, true),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(done) = open.pop() {
                    if done.anchor != 0 {
                        anchors.insert(done.anchor, nodes - done.start);
                    }
                }
                continue;
            }
            _ => continue,
        };
        nodes = nodes.saturating_add(size);
        if nodes > max_nodes {
            return fail(&FieldPath::root(), &limits::YAML_NODES, nodes);
        }
        if anchor != 0 && !opens {
            anchors.insert(anchor, 1);
        }
        // Where the node sits: its path, and its parent's count.
        let path = match open.last_mut() {
            None => FieldPath::root(),
            Some(parent) if parent.is_list => {
                parent.children += 1;
                if parent.children > max_items {
                    return fail(&parent.path, &limits::LIST_ITEMS, parent.children);
                }
                parent.path.index(parent.children - 1)
            }
            Some(parent) => {
                parent.children += 1;
                if parent.children % 2 == 1 {
                    parent.key = match &event {
                        Event::Scalar(key, ..) => Some(key.to_string()),
                        _ => Some(String::new()),
                    };
                    parent.path.clone()
                } else {
                    parent.path.child(&parent.key.take().unwrap_or_default())
                }
            }
        };
        if opens {
            if open.len() + 1 > max_depth {
                return Err(LoadError {
                    line,
                    message: format!("nested more than {max_depth} levels deep"),
                });
            }
            open.push(Open {
                path,
                children: 0,
                is_list: matches!(event, Event::SequenceStart(..)),
                key: None,
                start: nodes - 1,
                anchor,
            });
        }
    }
    Ok(())
}
