//! Migration file names (`^(\d{10})_(.*)\.(down|up)(\.sql)$`, with an optional `.checkpoint`).
//! Invariants: parsing is deterministic; an accepted name has a ten-digit version and renders
//! back to exactly the input; the other half of the pair parses to the same version, description
//! and checkpoint flag; a name without the suffix is never accepted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_migrate::{FileName, parse_file_name};

fn render(name: &FileName) -> String {
    format!(
        "{:010}_{}{}.{}.sql",
        name.version.0,
        name.description,
        if name.checkpoint { ".checkpoint" } else { "" },
        if name.up { "up" } else { "down" }
    )
}

fuzz_target!(|data: &[u8]| {
    let Some(text) = ptah_fuzz::text(data) else { return };
    let parsed = parse_file_name(text);
    assert_eq!(parsed, parse_file_name(text), "parsing is deterministic");
    let Some(name) = parsed else {
        let stem = text
            .strip_suffix(".up.sql")
            .or_else(|| text.strip_suffix(".down.sql"));
        let well_formed = stem.is_some_and(|stem| {
            let b = stem.as_bytes();
            b.len() >= 11 && b[..10].iter().all(u8::is_ascii_digit) && b[10] == b'_'
        });
        assert!(!well_formed, "a well-formed name {text:?} was refused");
        return;
    };
    assert!(
        (0..10_000_000_000).contains(&name.version.0),
        "version {}",
        name.version.0
    );
    assert_eq!(render(&name), text, "render → parse is the identity");
    let other_half = FileName {
        up: !name.up,
        ..name.clone()
    };
    let parsed_other = parse_file_name(&render(&other_half)).expect("the other half parses");
    assert_eq!(parsed_other, other_half);
});
