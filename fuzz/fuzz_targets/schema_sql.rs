//! The SQL DDL reader (pg_dump / mysqldump shaped text; the first byte chooses the dialect).
//! Invariants:
//! - reading is deterministic; a refusal names the file and has a bounded message;
//! - the statements it skips are listed deterministically too;
//! - an accepted schema written as canonical `schema.hcl` reads back to the same model (the SQL
//!   and HCL readers agree, as `crates/schema/tests/read_hcl.rs` checks for fixed inputs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_fuzz::assert_refusal_message;
use ptah_schema::{read::hcl, read::sql, write::hcl::to_hcl};

const FILE: &str = "schema.sql";

fuzz_target!(|data: &[u8]| {
    let Some((dialect, rest)) = ptah_fuzz::dialect_and_rest(data) else {
        return;
    };
    let Some(text) = ptah_fuzz::text(rest) else { return };
    let read = sql::parse_document(dialect, FILE, text);
    let again = sql::parse_document(dialect, FILE, text);
    let document = match (read, again) {
        (Ok(a), Ok(b)) => {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "reading is deterministic");
            a
        }
        (Err(a), Err(b)) => {
            let message = a.to_string();
            assert_eq!(message, b.to_string(), "reading is deterministic");
            assert!(
                message.starts_with(FILE),
                "a refusal does not name the file: {message}"
            );
            assert_refusal_message(&message, text.len());
            return;
        }
        (a, b) => panic!("reading is not deterministic: {:?} / {:?}", a.is_ok(), b.is_ok()),
    };
    let schema = document.schema;
    let written = to_hcl(dialect, &schema);
    let back = match hcl::parse(dialect, "written.hcl", &written) {
        Ok(back) => back,
        Err(err) => panic!("the schema read from SQL does not read back from HCL: {err}\n{written}"),
    };
    assert!(back == schema, "SQL → HCL → model changed the model:\n{written}");
});
