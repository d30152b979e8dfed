//! The `schema.hcl` reader (the first byte chooses the dialect). Invariants, as
//! `crates/schema/src/write/hcl.rs` documents them:
//! - reading is deterministic; a refusal names `file:line:column` inside the document and has a
//!   bounded message;
//! - an accepted schema written as canonical HCL reads back to the same model, and writing that
//!   again gives the same text (canonical form is a fixed point).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_fuzz::assert_refusal_message;
use ptah_schema::{read::hcl, write::hcl::to_hcl};

const FILE: &str = "schema.hcl";

fuzz_target!(|data: &[u8]| {
    let Some((dialect, rest)) = ptah_fuzz::dialect_and_rest(data) else {
        return;
    };
    let Some(text) = ptah_fuzz::text(rest) else { return };
    let read = hcl::parse(dialect, FILE, text);
    let again = hcl::parse(dialect, FILE, text);
    let schema = match (read, again) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "reading is deterministic");
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
    let written = to_hcl(dialect, &schema);
    let back = match hcl::parse(dialect, "written.hcl", &written) {
        Ok(back) => back,
        Err(err) => panic!("the written schema does not read back: {err}\n{written}"),
    };
    assert!(back == schema, "written → read changed the model:\n{written}");
    assert_eq!(to_hcl(dialect, &back), written, "canonical HCL is a fixed point");
});
