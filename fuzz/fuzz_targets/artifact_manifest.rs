//! The artifact manifest parser and its descriptor checks, run on registry bytes before any blob
//! is fetched. Invariants:
//! - parse and check are deterministic; a refusal has a bounded message;
//! - an accepted manifest satisfies the documented rules: each file's path passes the extraction
//!   path check (relative, no `..`, `.` or empty segment, no backslash or control character),
//!   paths are unique, digests are sha256, sizes and counts are within the limits, a schema
//!   artifact holds exactly `schema.hcl`;
//! - rebuilding it with `build_manifest` (what a push uploads) parses and checks back to the same
//!   kind, annotations and files (sorted by path).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_artifact::{Entry, Kind, Limits, build_manifest, check_manifest, parse_manifest};
use ptah_fuzz::assert_refusal_message;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let checked = parse_manifest(data).and_then(|m| check_manifest(&m, None, &limits));
    let again = parse_manifest(data).and_then(|m| check_manifest(&m, None, &limits));
    let checked = match (checked, again) {
        (Ok(a), Ok(b)) => {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "checking is deterministic");
            a
        }
        (Err(a), Err(b)) => {
            let message = a.to_string();
            assert_eq!(message, b.to_string(), "checking is deterministic");
            assert_refusal_message(&message, data.len());
            return;
        }
        _ => panic!("checking is not deterministic"),
    };
    assert!(checked.entries.len() <= limits.max_files);
    let mut total = 0u64;
    let mut paths = std::collections::BTreeSet::new();
    for entry in &checked.entries {
        assert!(
            limits.check_path(&entry.path).is_ok(),
            "{:?} was accepted",
            entry.path
        );
        assert!(!entry.path.starts_with('/') && !entry.path.contains('\\'));
        assert!(entry.path.split('/').all(|s| !matches!(s, "" | "." | "..")));
        assert!(entry.digest.to_string().starts_with("sha256:"));
        assert!(entry.size <= limits.max_file_size);
        total += entry.size;
        assert!(
            paths.insert(entry.path.clone()),
            "duplicate path {:?}",
            entry.path
        );
        assert!(checked.kind.allows_file(&entry.path));
    }
    assert!(total <= limits.max_total_size);
    if checked.kind == Kind::Schema {
        assert_eq!(paths.into_iter().collect::<Vec<_>>(), ["schema.hcl"]);
    }
    let files: Vec<_> = checked
        .entries
        .iter()
        .map(|e| (e.path.clone(), e.digest, e.size))
        .collect();
    let rebuilt =
        build_manifest(checked.kind, &files, &checked.annotations).expect("an accepted manifest rebuilds");
    let back = parse_manifest(&rebuilt)
        .and_then(|m| check_manifest(&m, Some(checked.kind), &limits))
        .expect("a rebuilt manifest passes its checks");
    let mut sorted: Vec<Entry> = checked.entries.clone();
    sorted.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    assert_eq!(back.entries, sorted, "rebuilding changed the files");
    assert_eq!(
        back.annotations, checked.annotations,
        "rebuilding changed the annotations"
    );
    assert_eq!(back.kind, checked.kind);
});
