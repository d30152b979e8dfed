//! The `-- +ptah` / `-- atlas:txmode` header of a migration file, and its durations. Invariants:
//! - reading is deterministic; a refusal is `Error::Header` naming the file and a line of it, with a
//!   bounded message;
//! - an accepted header never combines `no_transaction` with a timeout;
//! - only the header counts: appending SQL and then a directive (even an unknown one) after it
//!   changes nothing, neither the result nor the refusal;
//! - an accepted duration renders as milliseconds and parses back equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_fuzz::assert_refusal_message;
use ptah_migrate::{Error, TxMode, parse_duration, parse_headers};

const PATH: &str = "0000000001_fuzz.up.sql";

fn render(result: &Result<ptah_migrate::Headers, Error>) -> String {
    match result {
        Ok(headers) => format!("{headers:?}"),
        Err(err) => err.to_string(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(sql) = ptah_fuzz::text(data) else { return };
    if let Ok(duration) = parse_duration(sql) {
        let again = parse_duration(&format!("{}ms", duration.as_millis()));
        assert_eq!(again, Ok(duration), "a duration renders and parses back");
    }
    let result = parse_headers(PATH, sql);
    assert_eq!(
        render(&result),
        render(&parse_headers(PATH, sql)),
        "reading is deterministic"
    );
    let trailing = format!("{sql}\nSELECT 1;\n-- +ptah no_such_directive\n-- +ptah no_transaction\n");
    assert_eq!(
        render(&parse_headers(PATH, &trailing)),
        render(&result),
        "a directive after SQL changed the header"
    );
    match result {
        Ok(headers) => {
            if headers.tx_mode == TxMode::None {
                assert!(headers.lock_timeout.is_none() && headers.statement_timeout.is_none());
            }
        }
        Err(Error::Header { path, line, reason }) => {
            assert_eq!(path, PATH);
            let lines = sql.lines().count().max(1);
            assert!((1..=lines).contains(&line), "line {line} of {lines}");
            assert_refusal_message(&reason, sql.len());
        }
        Err(other) => panic!("a header refusal of another kind: {other}"),
    }
});
