//! The migration linter over arbitrary text as the up file of a pair, both dialects (the first
//! byte chooses). Invariants: it never panics; the same input gives the same report; every
//! finding names a rule of `RULES` at a line of the file (0 only for a rule about the whole file);
//! a refused file is refused with a message, as `migrations up` would refuse it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_migrate::Directory;
use ptah_migrationlint::{Config, RULES, lint_directory};

fuzz_target!(|data: &[u8]| {
    let Some((dialect, rest)) = ptah_fuzz::dialect_and_rest(data) else {
        return;
    };
    let Some(sql) = ptah_fuzz::text(rest) else { return };
    let files = vec![
        ("000001_fuzz.up.sql".to_owned(), sql.as_bytes().to_vec()),
        ("000001_fuzz.down.sql".to_owned(), b"SELECT 1;\n".to_vec()),
    ];
    let Ok(dir) = Directory::from_files("fuzz", files, None) else {
        return;
    };
    let first = lint_directory(&dir, dialect, &Config::default(), None);
    let second = lint_directory(&dir, dialect, &Config::default(), None);
    let lines = sql.matches('\n').count() + 1;
    match (first, second) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "the linter is deterministic");
            for f in &a.findings {
                assert!(RULES.iter().any(|r| r.code == f.code), "unknown code {}", f.code);
                assert!(f.line <= lines, "line {} of {lines}", f.line);
                assert!(!f.message.trim().is_empty(), "{} has no message", f.code);
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "the refusal is deterministic");
            assert!(!a.to_string().trim().is_empty());
        }
        _ => panic!("one run refused what the other linted"),
    }
});
