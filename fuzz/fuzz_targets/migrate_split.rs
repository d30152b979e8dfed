//! The migration statement splitter, both dialects (the first byte chooses). Invariants, as
//! `crates/migrate/src/split.rs` documents them:
//! - splitting is deterministic; an unterminated construct is an error naming a line of the input;
//! - `pieces` partitions the input: contiguous, non-empty, in order, covering every byte, ending on
//!   character boundaries; separators and directives have no code; a body's first code lies inside
//!   it and is not ASCII whitespace (non-ASCII characters are identifier characters to the lexers);
//! - `split` returns exactly the bodies that contain code, each the body's text from its first code
//!   with trailing whitespace trimmed, with the 1-based line of its first code.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_migrate::{PieceKind, pieces, split};

fuzz_target!(|data: &[u8]| {
    let Some((dialect, rest)) = ptah_fuzz::dialect_and_rest(data) else {
        return;
    };
    let Some(sql) = ptah_fuzz::text(rest) else { return };
    let parts = pieces(sql, dialect);
    assert_eq!(parts, pieces(sql, dialect), "pieces is deterministic");
    let statements = split(sql, dialect);
    assert_eq!(statements, split(sql, dialect), "split is deterministic");
    let parts = match parts {
        Ok(parts) => parts,
        Err(err) => {
            assert!(statements.is_err(), "split succeeded where pieces failed");
            let lines = sql.matches('\n').count() + 1;
            assert!(
                (1..=lines).contains(&err.line),
                "error line {} of {lines}",
                err.line
            );
            assert!(!err.reason.is_empty());
            return;
        }
    };
    let statements = statements.expect("pieces succeeded, so split does");
    let mut at = 0;
    let mut expected = Vec::new();
    for piece in &parts {
        assert_eq!(piece.range.start, at, "pieces are contiguous");
        assert!(piece.range.end > piece.range.start, "no empty piece");
        let text = sql
            .get(piece.range.clone())
            .expect("pieces end on char boundaries");
        at = piece.range.end;
        if piece.kind != PieceKind::Body {
            assert!(piece.first_code.is_none(), "a separator or directive has code");
            assert!(!text.trim().is_empty(), "an empty separator");
            continue;
        }
        let Some(first) = piece.first_code else { continue };
        assert!(piece.range.contains(&first), "first code outside its body");
        let code = sql
            .get(first..piece.range.end)
            .expect("first code on a char boundary");
        let blank = |c: char| c.is_ascii_whitespace() || c == '\u{0b}';
        assert!(!code.starts_with(blank), "first code is whitespace");
        let line = sql[..first].matches('\n').count() + 1;
        expected.push((code.trim_end_matches(blank).to_owned(), line));
    }
    assert_eq!(at, sql.len(), "pieces cover the input");
    let got: Vec<(String, usize)> = statements.into_iter().map(|s| (s.sql, s.line)).collect();
    assert_eq!(
        got, expected,
        "statements are the bodies with code, from their first code"
    );
    // No statement is empty (the seed `finding_vertical_tab` once split `SELECT 1;\x0b` into
    // `SELECT 1` and an empty one).
    assert!(got.iter().all(|(s, _)| !s.is_empty()), "an empty statement: {got:?}");
});
