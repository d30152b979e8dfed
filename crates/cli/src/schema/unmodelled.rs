//! The objects of the inspected database the model does not hold, for the reports: listed, so
//! that what `ptah` leaves alone is never left out without a word.

use std::fmt::Write as _;

use ptah_engine::{Error as DbError, Session};
use ptah_schema::Schema;
use serde::Serialize;

/// One object the model does not hold, as the reports list it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct NotManaged {
    kind: String,
    name: String,
}

/// At most this many objects are named; a report stays bounded (the runner reads a bounded
/// stdout) however many functions a database holds.
pub(crate) const LISTED: usize = 200;

/// The unmodelled objects: how many there are, and the first [`LISTED`] of them by kind and name.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Listing {
    total: usize,
    items: Vec<NotManaged>,
}

/// The unmodelled objects in the namespaces `live` was read from.
pub(crate) async fn list(session: &mut Session, live: &Schema) -> Result<Listing, DbError> {
    let namespaces: Vec<String> = live.namespaces.iter().cloned().collect();
    let all = ptah_engine::unmodelled(session, &namespaces).await?;
    Ok(Listing {
        total: all.len(),
        items: all
            .into_iter()
            .take(LISTED)
            .map(|u| NotManaged {
                kind: u.kind,
                name: u.name,
            })
            .collect(),
    })
}

/// One comment line per object, `{marker} not managed by ptah: {kind} {name}`, and a count of
/// those not named.
pub(crate) fn lines(listing: &Listing, marker: &str) -> String {
    let mut out = String::new();
    for item in &listing.items {
        let _ = writeln!(out, "{marker} not managed by ptah: {} {}", item.kind, item.name);
    }
    if listing.total > listing.items.len() {
        let more = listing.total - listing.items.len();
        let _ = writeln!(
            out,
            "{marker} not managed by ptah: {more} more objects not named here"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_listing_names_the_first_and_counts_the_rest() {
        let item = |i: usize| NotManaged {
            kind: "function".to_owned(),
            name: format!("f{i}"),
        };
        let listing = Listing {
            total: LISTED + 5,
            items: (0..LISTED).map(item).collect(),
        };
        let text = lines(&listing, "--");
        assert_eq!(text.lines().count(), LISTED + 1);
        assert!(
            text.starts_with("-- not managed by ptah: function f0\n"),
            "{text}"
        );
        assert!(
            text.ends_with("-- not managed by ptah: 5 more objects not named here\n"),
            "{text}"
        );
        let json = serde_json::to_value(&listing).expect("json");
        assert_eq!(json["total"], LISTED + 5);
    }
}
