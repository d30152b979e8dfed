//! Every acceptance and refusal rule, one case each, plus properties over random input.

use proptest::prelude::*;
use ptah_ocireference::{Digest, Error, Reference};

const D: &str = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";

fn parse(s: &str) -> Result<Reference, Error> {
    s.parse()
}

#[test]
fn accepts_the_documented_forms() {
    let r = parse("oci://registry.example.com/team/app-schema").expect("plain");
    assert_eq!(r.registry(), "registry.example.com");
    assert_eq!(r.repository(), "team/app-schema");
    assert_eq!(r.tag(), None);
    assert_eq!(r.tag_or_latest(), "latest");
    assert!(!r.is_pinned());

    let r = parse("oci://127.0.0.1:55443/ptah/schema:v20261129-abc").expect("port and tag");
    assert_eq!(r.registry(), "127.0.0.1:55443");
    assert_eq!(r.repository(), "ptah/schema");
    assert_eq!(r.tag(), Some("v20261129-abc"));

    let r = parse(&format!("oci://localhost:5000/a/b/c:1.0@{D}")).expect("tag and digest");
    assert_eq!(r.tag(), Some("1.0"));
    assert_eq!(r.digest().map(|d| d.to_string()).as_deref(), Some(D));
    assert!(r.is_pinned());

    let r = parse(&format!("oci://[::1]:5000/x@{D}")).expect("ipv6");
    assert_eq!(r.registry(), "[::1]:5000");
    assert_eq!(r.tag(), None);

    let r = parse("oci://reg.io/a__b.c-d---e/f_g:_tag.1-x").expect("separators");
    assert_eq!(r.repository(), "a__b.c-d---e/f_g");
}

#[test]
fn display_round_trips() {
    for s in [
        "oci://reg.io/a",
        "oci://reg.io:443/a/b:t",
        &format!("oci://reg.io/a@{D}"),
        &format!("oci://reg.io/a:t@{D}"),
    ] {
        assert_eq!(parse(s).expect("valid").to_string(), s);
    }
}

#[test]
fn refuses_each_rule_with_its_own_error() {
    let cases: Vec<(String, Error)> = vec![
        ("".into(), Error::Empty),
        (" oci://reg.io/a".into(), Error::SurroundingWhitespace),
        ("oci://reg.io/a\n".into(), Error::SurroundingWhitespace),
        ("oci://reg.io/a b".into(), Error::ControlCharacter),
        ("oci://reg.io/a\0b".into(), Error::ControlCharacter),
        ("https://reg.io/a".into(), Error::MissingScheme),
        ("reg.io/a".into(), Error::MissingScheme),
        ("oci://user:pass@reg.io/a".into(), Error::Credentials),
        ("oci://user@reg.io/a".into(), Error::Credentials),
        ("oci://reg.io/a?x=1".into(), Error::QueryOrFragment),
        ("oci://reg.io/a#frag".into(), Error::QueryOrFragment),
        ("oci://reg.io/a\\b".into(), Error::Backslash),
        ("oci://reg.io/a%2fb".into(), Error::EncodedSeparator),
        ("oci://reg.io/a%2Fb".into(), Error::EncodedSeparator),
        ("oci://reg.io/a%5Cb".into(), Error::EncodedSeparator),
        (
            "oci://reg.io/Team/app".into(),
            Error::UppercaseRepository("Team/app".into()),
        ),
        ("oci://reg.io".into(), Error::MissingRepository),
        ("oci://reg.io/".into(), Error::MissingRepository),
        ("oci:///a".into(), Error::InvalidHost("".into())),
        ("oci://-reg.io/a".into(), Error::InvalidHost("-reg.io".into())),
        ("oci://reg.io:0/a".into(), Error::InvalidPort("0".into())),
        ("oci://reg.io:65536/a".into(), Error::InvalidPort("65536".into())),
        ("oci://reg.io:/a".into(), Error::InvalidPort("".into())),
        (
            "oci://reg.io/a//b".into(),
            Error::InvalidRepository("a//b".into()),
        ),
        ("oci://reg.io/a/".into(), Error::InvalidRepository("a/".into())),
        ("oci://reg.io/-a".into(), Error::InvalidRepository("-a".into())),
        (
            "oci://reg.io/a..b".into(),
            Error::InvalidRepository("a..b".into()),
        ),
        (
            "oci://reg.io/a___b".into(),
            Error::InvalidRepository("a___b".into()),
        ),
        ("oci://reg.io/a:".into(), Error::InvalidTag("".into())),
        ("oci://reg.io/a:.t".into(), Error::InvalidTag(".t".into())),
        (
            format!("oci://reg.io/a:{}", "t".repeat(129)),
            Error::InvalidTag("t".repeat(129)),
        ),
        (
            "oci://reg.io/a@sha256:abc".into(),
            Error::InvalidDigest("sha256:abc".into()),
        ),
        (
            format!("oci://reg.io/a@{}", D.to_uppercase()),
            Error::InvalidDigest(D.to_uppercase()),
        ),
        (format!("oci://reg.io/a@x@{D}"), Error::Credentials),
        (
            format!("oci://reg.io/{}", "a".repeat(300)),
            Error::TooLong { len: 307, max: 255 },
        ),
        (
            format!("oci://reg.io/{}", "a/".repeat(1100)),
            Error::TooLong { len: 2213, max: 2048 },
        ),
    ];
    for (input, want) in cases {
        assert_eq!(parse(&input), Err(want), "input {input:?}");
    }
}

#[test]
fn pinning_keeps_the_tag_as_a_label_and_blocks_push() {
    let r = parse("oci://reg.io/a:v1").expect("valid");
    assert!(r.for_push().is_ok());
    let digest: Digest = D.parse().expect("digest");
    let pinned = r.pinned(digest);
    assert_eq!(pinned.to_string(), format!("oci://reg.io/a:v1@{D}"));
    assert_eq!(pinned.to_distribution_string(), format!("reg.io/a:v1@{D}"));
    assert_eq!(pinned.for_push(), Err(Error::DigestNotAllowedForPush));
}

fn component() -> impl Strategy<Value = String> {
    "[a-z0-9]{1,6}((\\.|_|__|-{1,3})[a-z0-9]{1,6}){0,2}"
}

fn valid_reference() -> impl Strategy<Value = String> {
    (
        "[a-z][a-z0-9-]{0,10}[a-z0-9](\\.[a-z]{2,5}){0,2}",
        proptest::option::of(1u16..=65535),
        prop::collection::vec(component(), 1..4),
        proptest::option::of("[A-Za-z0-9_][A-Za-z0-9._-]{0,20}"),
        proptest::option::of("[0-9a-f]{64}"),
    )
        .prop_map(|(host, port, path, tag, digest)| {
            let mut s = format!("oci://{host}");
            if let Some(p) = port {
                s.push_str(&format!(":{p}"));
            }
            s.push('/');
            s.push_str(&path.join("/"));
            if let Some(t) = tag {
                s.push_str(&format!(":{t}"));
            }
            if let Some(d) = digest {
                s.push_str(&format!("@sha256:{d}"));
            }
            s
        })
}

proptest! {
    #[test]
    fn garbage_never_panics(s in any::<String>()) {
        let _ = parse(&s);
        let _ = parse(&format!("oci://{s}"));
    }

    #[test]
    fn valid_references_round_trip(s in valid_reference()) {
        let r = parse(&s).expect("generated references are valid");
        prop_assert_eq!(r.to_string(), s.clone());
        prop_assert_eq!(parse(&r.to_string()).expect("reparse"), r);
    }

    #[test]
    fn a_forbidden_character_anywhere_is_refused(
        s in valid_reference(),
        bad in prop::sample::select(vec![" ", "\t", "\0", "?", "#", "\\", "%2f", "%5C", "\u{7f}"]),
        at in any::<prop::sample::Index>(),
    ) {
        let cut = s.char_indices().map(|(i, _)| i).nth(at.index(s.chars().count())).unwrap_or(0);
        let hostile = format!("{}{}{}", &s[..cut], bad, &s[cut..]);
        // The whole-text checks run before any parsing, so each character is refused for itself.
        let want = match bad {
            " " | "\t" if cut == 0 => Error::SurroundingWhitespace,
            " " | "\t" | "\0" | "\u{7f}" => Error::ControlCharacter,
            "?" | "#" => Error::QueryOrFragment,
            "\\" => Error::Backslash,
            _ => Error::EncodedSeparator,
        };
        prop_assert_eq!(parse(&hostile), Err(want), "{:?}", hostile);
    }
}
