//! A property's statement, read from the properties table of specs/spec.md (the one place it
//! is written), for the timeline's header.

/// The specification, built in so the served picture quotes the statement it was built with.
const SPEC: &str = include_str!("../../../../specs/spec.md");

/// The statement of the property with spec id `id` (`CANCEL-1`), markup removed: the third cell
/// of its row `| id | name | statement | kind |`.
pub fn of(id: &str) -> Option<String> {
    SPEC.lines().find_map(|line| {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        match cells.as_slice() {
            ["", row_id, _, statement, _, ""] if *row_id == id => {
                Some(statement.replace(['`', '*'], ""))
            }
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::properties::PROPERTIES;

    #[test]
    fn every_property_has_its_statement() {
        for p in PROPERTIES {
            let s = of(p.id).unwrap_or_else(|| panic!("{} has no row in specs/spec.md", p.id));
            assert!(s.len() > 10, "{}: {s}", p.id);
            assert!(!s.contains('`'), "{s}");
        }
        assert!(of("CANCEL-1").unwrap().starts_with("No DELETE is issued"));
        assert_eq!(of("NO-SUCH-ID"), None);
    }
}
