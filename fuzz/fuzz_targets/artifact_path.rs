//! The extraction path check every file of a pulled artifact passes before it is written.
//! Invariants (the first two bytes shrink the limits so the bounds themselves get exercised):
//! - the check is deterministic, and a refusal has a bounded message;
//! - an accepted path is non-empty, within the length and depth limits, relative, free of
//!   backslashes and control characters, and has no empty, `.` or `..` segment — and the standard
//!   library agrees: every component of it is a normal one, so joining it under a directory stays
//!   under that directory.
#![no_main]

use std::path::{Component, Path};

use libfuzzer_sys::fuzz_target;
use ptah_artifact::Limits;
use ptah_fuzz::assert_refusal_message;

fuzz_target!(|data: &[u8]| {
    let (limits, rest) = match data {
        [len, depth, rest @ ..] if len & 0x80 != 0 => (
            Limits {
                max_path_len: usize::from(*len & 0x7f),
                max_path_depth: usize::from(*depth & 0x0f),
                ..Limits::default()
            },
            rest,
        ),
        _ => (Limits::default(), data),
    };
    let Some(path) = ptah_fuzz::text(rest) else { return };
    let checked = limits.check_path(path);
    assert_eq!(
        checked.as_ref().map_err(ToString::to_string),
        limits.check_path(path).as_ref().map_err(ToString::to_string),
        "the check is deterministic"
    );
    if let Err(err) = checked {
        return assert_refusal_message(&err.to_string(), path.len());
    }
    assert!(!path.is_empty() && path.len() <= limits.max_path_len);
    assert!(!path.starts_with('/') && !path.contains('\\') && !path.chars().any(char::is_control));
    let segments: Vec<&str> = path.split('/').collect();
    assert!(segments.len() <= limits.max_path_depth);
    assert!(segments.iter().all(|s| !matches!(*s, "" | "." | "..")));
    assert!(
        Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_))),
        "{path:?} has a component that is not a plain name"
    );
    let root = Path::new("/extract/root");
    assert!(root.join(path).starts_with(root));
});
