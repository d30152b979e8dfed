//! Deep nesting is refused with a typed error, never a stack overflow: 100,000 levels of each
//! bracket kind in `schema.hcl` (refused before parsing) and of parentheses in SQL (sqlparser's
//! recursion limit). These run on the test harness's ordinary threads, whose stack is the
//! default 2 MiB: an overflow would abort the test binary.

use ptah_schema::Dialect;
use ptah_schema::read::{ReadError, hcl, sql};

const DEEP: usize = 100_000;

/// `head`, then `open` `n` times, then `middle`, then `close` `n` times.
fn nest(head: &str, open: &str, middle: &str, close: &str, n: usize) -> String {
    format!("{head}{}{middle}{}", open.repeat(n), close.repeat(n))
}

/// The HCL documents nested `n` levels by each kind, all opening on line 2.
fn hcl_cases(n: usize) -> Vec<(&'static str, String)> {
    let head = "schema \"app\" {}\n";
    vec![
        ("blocks", nest(head, "a {\n", "", "}\n", n)),
        ("lists", nest(&format!("{head}x = "), "[", "1", "]", n)),
        ("parentheses", nest(&format!("{head}x = "), "(", "1", ")", n)),
        ("objects", nest(&format!("{head}x = "), "{ a = ", "1", " }", n)),
        (
            "interpolations in strings",
            nest(&format!("{head}x = "), "\"${", "1", "}\"", n),
        ),
        (
            "a heredoc's interpolation",
            format!(
                "{head}x = <<EOT\n{}\nEOT\n",
                nest("", "${[", "1", "]}", n / 2 + 1)
            ),
        ),
    ]
}

fn nesting_error(result: Result<impl std::fmt::Debug, ReadError>) -> Option<(usize, usize, usize)> {
    match result {
        Err(ReadError::NestingTooDeep { at, limit }) => Some((limit, at.line, at.column)),
        _ => None,
    }
}

#[test]
fn hcl_nested_a_hundred_thousand_levels_is_refused_before_parsing() {
    for (kind, text) in hcl_cases(DEEP) {
        let got = nesting_error(hcl::parse(Dialect::Postgres, "deep.hcl", &text));
        let (limit, line, _) = got.unwrap_or_else(|| panic!("{kind}: not refused for its nesting"));
        assert_eq!(limit, hcl::MAX_NESTING, "{kind}");
        assert_eq!(limit, 64, "{kind}: the documented limit");
        assert!(line >= 2, "{kind}: line {line}");
    }
}

#[test]
fn hcl_refusal_points_at_the_first_level_past_the_limit() {
    let text = format!("schema \"app\" {{}}\nx = {}1{}", "[".repeat(65), "]".repeat(65));
    let got = nesting_error(hcl::parse(Dialect::Postgres, "deep.hcl", &text));
    // "x = " is four characters: the 65th `[` is the 69th character of line 2.
    assert_eq!(got, Some((64, 2, 69)));
    let blocks = format!("schema \"app\" {{}}\n{}", "a {\n".repeat(65));
    let got = nesting_error(hcl::parse(Dialect::Postgres, "deep.hcl", &blocks));
    assert_eq!(got, Some((64, 66, 3)));
}

#[test]
fn hcl_at_the_limit_reaches_the_parser_without_overflow() {
    for (kind, text) in hcl_cases(hcl::MAX_NESTING - 1) {
        let result = hcl::parse(Dialect::Postgres, "deep.hcl", &text);
        assert!(nesting_error(result).is_none(), "{kind}: refused for its nesting");
    }
}

#[test]
fn brackets_in_hcl_strings_comments_and_heredocs_do_not_count() {
    let template = r#"# OPEN
// OPEN
/* OPEN */
schema "app" {}
table "t" {
  schema = schema.app
  column "id" {
    type = int
    comment = "OPEN \" $${ %%{ OPEN"
  }
}
"#;
    let text = template.replace("OPEN", &"{[(".repeat(500));
    let schema = hcl::parse(Dialect::Postgres, "text.hcl", &text).expect("reads");
    assert_eq!(schema.tables.len(), 1);
    // The reader takes no heredoc where it wants a string, so this one is refused, but for what
    // it is, not for the brackets in it.
    let heredoc = "x = <<-EOT\n  OPEN $${ %%{ OPEN\n  EOT\n".replace("OPEN", &"{[(".repeat(500));
    let result = hcl::parse(Dialect::Postgres, "heredoc.hcl", &heredoc);
    assert!(matches!(result, Err(ReadError::Unsupported { .. })), "{result:?}");
}

/// SQL statements with a 100,000-deep parenthesised expression, per dialect.
fn sql_cases() -> Vec<(&'static str, Dialect, String)> {
    let expr = nest("", "(", "1", ")", DEEP);
    vec![
        (
            "check",
            Dialect::Postgres,
            format!("CREATE TABLE t (id int CHECK ({expr} > 0));"),
        ),
        (
            "default",
            Dialect::Postgres,
            format!("CREATE TABLE t (id int DEFAULT {expr});"),
        ),
        (
            "index",
            Dialect::Postgres,
            format!("CREATE TABLE t (id int);\nCREATE INDEX i ON t ({expr});"),
        ),
        (
            "mysql check",
            Dialect::Mysql,
            format!("CREATE TABLE t (id int CHECK ({expr} > 0));"),
        ),
        (
            "mysql default",
            Dialect::Mysql,
            format!("CREATE TABLE t (id int DEFAULT {expr});"),
        ),
    ]
}

#[test]
fn sql_with_a_hundred_thousand_nested_parentheses_is_refused() {
    for (kind, dialect, text) in sql_cases() {
        let got = nesting_error(sql::parse(dialect, "deep.sql", &text));
        let (limit, _, _) = got.unwrap_or_else(|| panic!("{kind}: not refused for its nesting"));
        assert_eq!(limit, sql::MAX_NESTING, "{kind}");
    }
}

/// A domain's check and a view's query are kept as the text written (the server parses them);
/// their normalisation goes through sqlparser too, and past its limit keeps the text as written
/// instead of overflowing.
#[test]
fn sql_bodies_kept_as_text_read_deep_nesting_without_overflow() {
    let expr = nest("", "(", "1", ")", DEEP);
    for (kind, text) in [
        (
            "domain",
            format!("CREATE DOMAIN d AS int CHECK (VALUE > {expr});"),
        ),
        ("view", format!("CREATE VIEW v AS SELECT {expr} AS x;")),
    ] {
        let result = sql::parse(Dialect::Postgres, "deep.sql", &text);
        assert!(
            matches!(result, Ok(_) | Err(ReadError::NestingTooDeep { .. })),
            "{kind}: {:?}",
            result.err()
        );
    }
}

/// Found by the `schema_hcl` fuzz campaign: `hcl-edit` takes exponential time on short inputs
/// mixing `%{` with `-` (985 bytes took over a minute). A template directive is refused before
/// parsing, wherever it is; an escaped `%%{` in a string or heredoc, and `%{` in a comment, are
/// text and read.
#[test]
fn template_directives_are_refused_before_parsing() {
    let head = "schema \"app\" {}\n";
    for (what, doc, line) in [
        ("in an expression", format!("{head}a = -3-b-%{{3-u-3-b-%{{3-u"), 2),
        (
            "the fuzz input's shape",
            format!("{head}{}", "a = -3-b-%{3-u-3-b-%{3-u".repeat(40)),
            2,
        ),
        ("in a string", format!("{head}x = \"%{{if true}}y%{{endif}}\""), 2),
        (
            "in a heredoc",
            format!("{head}x = <<EOT\n%{{for a in b}}c%{{endfor}}\nEOT\n"),
            3,
        ),
    ] {
        let started = std::time::Instant::now();
        match hcl::parse(Dialect::Postgres, "schema.hcl", &doc) {
            Err(ReadError::Unsupported { at, what: found }) => {
                assert!(found.contains("template directives"), "{what}: {found}");
                assert_eq!(at.line, line, "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
        // Not a timing assert: an unguarded parse of the second case runs for minutes.
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "{what}");
    }
    let text = format!(
        "{head}# a %{{ in a comment\ntable \"t\" {{\n  schema = schema.public\n  comment = \"50%%{{ off\"\n  column \"id\" {{\n    type = integer\n  }}\n}}\n"
    );
    let read = hcl::parse(Dialect::Postgres, "schema.hcl", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let table = read.tables.values().next().expect("a table");
    assert_eq!(table.comment.as_deref(), Some("50%{ off"));
}
