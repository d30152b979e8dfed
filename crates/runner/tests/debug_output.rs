//! `{:?}` and `{:#?}` of everything that holds a credential show its shape, never the credential.

use std::collections::BTreeMap;

use ptah_dataplane::{Operation, ResultPayload, env};
use ptah_runner::{
    bounded::{Bounded, Keep},
    command::ChildCommand,
    inputs::Env,
    run::Outcome,
};

const PASSWORD: &str = "s3cr3t/p@ss";
const TOKEN: &str = "registry-token-XYZ";
const URL: &str = "postgres://app:s3cr3t%2Fp%40ss@db.example:5432/shop";

/// The secrets and the forms `Debug` could print them in (raw, percent-encoded, escaped).
fn forms() -> Vec<&'static str> {
    vec![
        PASSWORD,
        "s3cr3t%2Fp%40ss",
        "s3cr3t%2fp%40ss",
        "s3cr3t",
        TOKEN,
        "registry-token",
    ]
}

fn assert_hidden(what: &str, x: &impl std::fmt::Debug) {
    for text in [format!("{x:?}"), format!("{x:#?}")] {
        let squeezed: String = text.split_whitespace().collect();
        for form in forms() {
            assert!(!text.contains(form), "{what} shows {form:?}: {text}");
            // Bytes print as numbers: `[115, 51, …]`.
            let numbers: String = format!("{:?}", form.as_bytes()).split_whitespace().collect();
            let numbers = numbers.trim_start_matches('[').trim_end_matches(']');
            assert!(
                !squeezed.contains(numbers),
                "{what} shows {form:?} as bytes: {text}"
            );
        }
        assert!(text.contains("[REDACTED]"), "{what} marks what it hides: {text}");
    }
}

fn env() -> Env {
    Env(BTreeMap::from([
        (env::DB_URL.to_owned(), URL.to_owned()),
        (env::REGISTRY_TOKEN.to_owned(), TOKEN.to_owned()),
        (env::REGISTRY_PASSWORD.to_owned(), PASSWORD.to_owned()),
        ("SOME_UNKNOWN_SECRET".to_owned(), PASSWORD.to_owned()),
        (env::SCHEMA_FROM.to_owned(), "/schema".to_owned()),
    ]))
}

#[test]
fn the_environment_hides_every_credential() {
    let e = env();
    assert_hidden("Env", &e);
    let text = format!("{e:?}");
    assert!(text.contains(env::DB_URL) && text.contains("/schema"), "{text}");
}

#[test]
fn a_child_command_hides_its_environment_values() {
    let cmd = ChildCommand {
        args: vec!["schema".into(), "drift".into()],
        env: vec![
            (env::DB_URL.to_owned(), URL.to_owned()),
            (env::REGISTRY_PASSWORD.to_owned(), PASSWORD.to_owned()),
        ],
    };
    assert_hidden("ChildCommand", &cmd);
    assert!(format!("{cmd:?}").contains("drift"));
}

#[test]
fn a_redactor_hides_what_it_redacts() {
    let r = env().redactor();
    assert_hidden("Redactor", &r);
}

#[test]
fn an_outcome_hides_its_redactor() {
    let outcome = Outcome {
        payload: ResultPayload::new(Operation::Observe, None),
        diagnostics: Some(b"child said something".to_vec()),
        redactor: env().redactor(),
    };
    assert_hidden("Outcome", &outcome);
}

#[test]
fn a_capture_shows_its_size_not_its_unredacted_bytes() {
    let mut b = Bounded::new(Keep::Tail, 1024);
    b.push(format!("connecting with {PASSWORD} and {TOKEN}").as_bytes());
    assert_hidden("Bounded", &b);
}
