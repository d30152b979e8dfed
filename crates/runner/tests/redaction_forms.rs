//! Redaction against a hand-made table: each row is a secret (by name) and one form a program
//! may print it in, computed outside the redactor (with Python's `base64`, `json` and
//! `urllib.parse`, and Rust's escaping rules written out by hand) and pasted here as a literal.
//! Every form must be gone from the redacted text.

use ptah_runner::redact::Redactor;

/// Which secret a row is about, and how the redactor learns it.
#[derive(Debug, Clone, Copy)]
enum S {
    /// `Sec"re\t'Pw/é` + BEL + `~`, added as a secret.
    A,
    /// `hunter2-ÿü?>b64`, added as a secret; the rows embed it in `u…u:<secret>@x`.
    B,
    /// `pa/ss?w#rd`, the unencoded password of `postgres://u:pa/ss?w#rd@host:5432/db`.
    C,
    /// `é/ö`, added as a secret.
    D,
    /// `12/s@s#w`, the unencoded password of `postgres://u:12/s@s#w@host:5432/db`, which the URL
    /// library reads as host `u`, port 12.
    E,
}
use S::{A, B, C, D, E};

fn redactor(s: S) -> Redactor {
    let mut r = Redactor::new();
    match s {
        A => r.add_secret("Sec\"re\\t'Pw/é\u{7}~"),
        B => r.add_secret("hunter2-ÿü?>b64"),
        C => r.add_url("postgres://u:pa/ss?w#rd@host:5432/db"),
        D => r.add_secret("é/ö"),
        E => r.add_url("postgres://u:12/s@s#w@host:5432/db"),
    }
    r
}

const FORMS: &[(S, &str)] = &[
    // rust Debug
    (A, "Sec\\\"re\\\\t'Pw/é\\u{7}~"),
    // rust escape_default
    (A, "Sec\\\"re\\\\t\\'Pw/\\u{e9}\\u{7}~"),
    // sql ''
    (A, "Sec\"re\\t''Pw/é\u{7}~"),
    // sql ""
    (A, "Sec\"\"re\\t'Pw/é\u{7}~"),
    // sql both
    (A, "Sec\"\"re\\t''Pw/é\u{7}~"),
    // json of sql ''
    (A, "Sec\\\"re\\\\t''Pw/é\\u0007~"),
    // b64 std padded
    (A, "U2VjInJlXHQnUHcvw6kHfg=="),
    // b64 std unpadded
    (A, "U2VjInJlXHQnUHcvw6kHfg"),
    // b64 url padded
    (A, "U2VjInJlXHQnUHcvw6kHfg=="),
    // b64 url unpadded
    (A, "U2VjInJlXHQnUHcvw6kHfg"),
    // b64 std user:secret@x, prefix 3
    (B, "dXU6aHVudGVyMi3Dv8O8Pz5iNjRAeA=="),
    // b64 std unpadded prefix 3
    (B, "dXU6aHVudGVyMi3Dv8O8Pz5iNjRAeA"),
    // b64 std core at prefix 3
    (B, "aHVudGVyMi3Dv8O8Pz5iNj"),
    // b64 url user:secret@x, prefix 3
    (B, "dXU6aHVudGVyMi3Dv8O8Pz5iNjRAeA=="),
    // b64 url unpadded prefix 3
    (B, "dXU6aHVudGVyMi3Dv8O8Pz5iNjRAeA"),
    // b64 url core at prefix 3
    (B, "aHVudGVyMi3Dv8O8Pz5iNj"),
    // b64 std user:secret@x, prefix 4
    (B, "dXV1Omh1bnRlcjItw7/DvD8+YjY0QHg="),
    // b64 std unpadded prefix 4
    (B, "dXV1Omh1bnRlcjItw7/DvD8+YjY0QHg"),
    // b64 std core at prefix 4
    (B, "h1bnRlcjItw7/DvD8+YjY0"),
    // b64 url user:secret@x, prefix 4
    (B, "dXV1Omh1bnRlcjItw7_DvD8-YjY0QHg="),
    // b64 url unpadded prefix 4
    (B, "dXV1Omh1bnRlcjItw7_DvD8-YjY0QHg"),
    // b64 url core at prefix 4
    (B, "h1bnRlcjItw7_DvD8-YjY0"),
    // b64 std user:secret@x, prefix 5
    (B, "dXV1dTpodW50ZXIyLcO/w7w/PmI2NEB4"),
    // b64 std unpadded prefix 5
    (B, "dXV1dTpodW50ZXIyLcO/w7w/PmI2NEB4"),
    // b64 std core at prefix 5
    (B, "odW50ZXIyLcO/w7w/PmI2N"),
    // b64 url user:secret@x, prefix 5
    (B, "dXV1dTpodW50ZXIyLcO_w7w_PmI2NEB4"),
    // b64 url unpadded prefix 5
    (B, "dXV1dTpodW50ZXIyLcO_w7w_PmI2NEB4"),
    // b64 url core at prefix 5
    (B, "odW50ZXIyLcO_w7w_PmI2N"),
    // fallback url password
    (C, "pa/ss?w#rd"),
    // pct upper
    (C, "pa%2Fss%3Fw%23rd"),
    // pct lower
    (C, "pa%2fss%3fw%23rd"),
    // every byte, mixed case
    (C, "%70%61%2F%73%73%3f%77%23%72%64"),
    // password the URL library mis-splits
    (E, "12/s@s#w"),
    // pct
    (E, "12%2Fs%40s%23w"),
    // pct
    (D, "%C3%A9%2F%C3%B6"),
    // pct mixed case
    (D, "%c3%A9%2F%C3%b6"),
    // every byte, mixed case
    (D, "%c3%a9%2F%c3%b6"),
];

#[test]
fn no_form_in_the_table_survives_redaction() {
    let mut survivors = Vec::new();
    for (s, form) in FORMS {
        let r = redactor(*s);
        for text in [
            format!("log: {form} end"),
            (*form).to_owned(),
            format!("x{form}y\n{form}"),
        ] {
            let out = String::from_utf8_lossy(&r.redact(text.as_bytes())).into_owned();
            if out.contains(form) {
                survivors.push(format!("{s:?} {form:?} in {out:?}"));
            }
        }
    }
    assert!(survivors.is_empty(), "forms left: {survivors:#?}");
}

#[test]
fn text_without_a_secret_is_left_alone() {
    for s in [A, B, C, D, E] {
        let r = redactor(s);
        let text = "postgres://u@host:5432/db?sslmode=require connected; 42 rows";
        assert_eq!(r.redact_str(text), text, "{s:?}");
    }
}
