//! The statement classifier that gates plans and migrations (the first byte chooses the
//! dialect). Invariants:
//! - every entry point is deterministic and they agree: `classify` fails to tokenize exactly when
//!   the others do; it refuses credential-bearing SQL exactly when `is_credential_bearing` says so;
//!   otherwise its severity is `statement_severity` and its first privilege is `privilege_kind`;
//! - severity is the highest of the statements': two texts joined by a `;` line classify as the
//!   higher of the two (when all three tokenize), so adding a statement never lowers it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_fuzz::assert_refusal_message;
use ptah_schema::classify::{
    ClassifyError, classify, is_credential_bearing, privilege_kind, statement_severity,
};

fuzz_target!(|data: &[u8]| {
    let Some((dialect, rest)) = ptah_fuzz::dialect_and_rest(data) else {
        return;
    };
    let Some(sql) = ptah_fuzz::text(rest) else { return };
    let classified = classify(sql, dialect);
    assert_eq!(
        format!("{classified:?}"),
        format!("{:?}", classify(sql, dialect)),
        "deterministic"
    );
    let severity = statement_severity(sql, dialect);
    let credential = is_credential_bearing(sql, dialect);
    let privilege = privilege_kind(sql, dialect);
    match classified {
        Err(err @ ClassifyError::Tokenize { .. }) => {
            assert!(
                severity.is_err() && credential.is_err() && privilege.is_err(),
                "tokenizing is shared"
            );
            assert_refusal_message(&err.to_string(), sql.len());
        }
        Err(err @ ClassifyError::CredentialBearing { .. }) => {
            assert_eq!(credential.ok(), Some(true), "refused but not credential-bearing");
            assert_refusal_message(&err.to_string(), sql.len());
        }
        Ok(c) => {
            assert_eq!(
                credential.ok(),
                Some(false),
                "credential-bearing SQL was classified"
            );
            assert_eq!(severity.ok(), Some(c.severity));
            assert_eq!(privilege.ok(), Some(c.privileges.first().copied()));
            let mut unique = c.privileges.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), c.privileges.len(), "privileges repeat");
        }
    }
    // Split the text in two at a char boundary chosen by its length; join the halves by a `;` line.
    let mut cut = sql.len() / 2;
    while !sql.is_char_boundary(cut) {
        cut -= 1;
    }
    let (a, b) = sql.split_at(cut);
    let joined = format!("{a}\n;\n{b}");
    if let (Ok(sa), Ok(sb), Ok(sj)) = (
        statement_severity(a, dialect),
        statement_severity(b, dialect),
        statement_severity(&joined, dialect),
    ) {
        assert_eq!(sj, sa.max(sb), "joined severity is not the higher of the two");
    }
});
