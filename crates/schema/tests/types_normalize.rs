//! Expression normalization: author forms and catalog forms that must (and must not) compare equal.

use ptah_schema::normalize::{self, canonical_number, default_value, expression};
use ptah_schema::{DefaultValue, Dialect, Literal};

const PG: Dialect = Dialect::Postgres;
const MY: Dialect = Dialect::Mysql;

#[test]
fn author_and_catalog_forms_compare_equal() {
    let pairs = [
        (PG, "total_cents >= 0", "(total_cents >= 0)"),
        (PG, "a > 0 AND b > 0", "((a > 0) AND (b > 0))"),
        (PG, "state <> 'paid'", "(state <> 'paid'::billing.invoice_state)"),
        (PG, "'draft'", "'draft'::invoice_state"),
        (PG, "0", "0::bigint"),
        (PG, "-1", "'-1'::integer"),
        (PG, "now()", "NOW()"),
        (PG, "CURRENT_TIMESTAMP", "current_timestamp"),
        (PG, "nextval('t_id_seq')", "nextval('t_id_seq'::regclass)"),
        (PG, "\"email\" IS NOT NULL", "(email IS NOT NULL)"),
        (PG, "(a + b) * c", "((a + b) * c)"),
        (PG, "a + b * c", "(a + (b * c))"),
        (PG, "'{}'", "'{}'::jsonb"),
        (PG, "left(description, 64)", "\"left\"(description, 64)"),
        (
            PG,
            "ratio BETWEEN 0 AND 1",
            "((ratio >= (0)::double precision) AND (ratio <= (1)::double precision))",
        ),
        (PG, "n NOT BETWEEN 1 AND 5", "((n < 1) OR (n > 5))"),
        (
            PG,
            "a + b BETWEEN 1 AND 5 AND c",
            "(((a + b) >= 1) AND ((a + b) <= 5) AND c)",
        ),
        (MY, "CURRENT_TIMESTAMP", "current_timestamp()"),
        (MY, "now()", "current_timestamp()"),
        (MY, "NOW(6)", "current_timestamp(6)"),
        (MY, "total_cents >= 0", "`total_cents` >= 0"),
        (MY, "a > 0 and b > 0", "(`a` > 0) and (`b` > 0)"),
    ];
    for (dialect, author, catalog) in pairs {
        assert_eq!(
            expression(dialect, author),
            expression(dialect, catalog),
            "{author} vs {catalog}"
        );
    }
}

/// The catalog's casts of `varchar` columns to text stay in the canonical text (over an integer
/// or an enum such a cast is the meaning), and only the looser comparison form drops them.
#[test]
fn column_casts_to_text_are_kept_and_compare_loosely() {
    let pairs = [
        ("status <> 'x'", "((status)::text <> 'x'::text)"),
        ("lower(email)", "lower((email)::text)"),
    ];
    for (author, catalog) in pairs {
        assert_ne!(expression(PG, author), expression(PG, catalog), "{author}");
        let loose = |t: &str| normalize::without_column_text_casts(PG, &expression(PG, t));
        assert_eq!(loose(author), loose(catalog), "{author} vs {catalog}");
    }
    assert_eq!(
        expression(PG, "(tenant_id)::text = current_setting('app.tenant'::text)"),
        "tenant_id::text = current_setting('app.tenant')"
    );
}

#[test]
fn canonical_text_is_lowercase_and_minimal() {
    assert_eq!(expression(PG, "((A > 0) AND (B > 0))"), "a > 0 and b > 0");
    assert_eq!(expression(PG, "\"Mixed\" > 1"), "\"Mixed\" > 1");
    assert_eq!(expression(PG, "\"order\" > 1"), "\"order\" > 1");
    assert_eq!(expression(MY, "`Total` >= 0"), "total >= 0");
    assert_eq!(expression(MY, "CURRENT_TIMESTAMP"), "current_timestamp()");
    assert_eq!(expression(PG, "CURRENT_TIMESTAMP"), "current_timestamp");
    assert_eq!(expression(PG, "'It''s'"), "'It''s'");
}

#[test]
fn different_meanings_stay_different() {
    let pairs = [
        (PG, "now()", "CURRENT_TIMESTAMP"),
        (PG, "(a + b) * c", "a + b * c"),
        (PG, "a - (b - c)", "a - b - c"),
        (PG, "a OR b AND c", "(a OR b) AND c"),
        (PG, "'Draft'", "'draft'"),
        (PG, "\"Email\" IS NULL", "email IS NULL"),
        (PG, "x > 1", "x >= 1"),
        (PG, "\"Left\"(x, 1)", "left(x, 1)"),
        (MY, "x BETWEEN 1 AND 5", "x >= 1 AND x <= 5"),
        (MY, "'abc'", "abc"),
        (MY, "now()", "utc_timestamp()"),
    ];
    for (dialect, a, b) in pairs {
        assert_ne!(expression(dialect, a), expression(dialect, b), "{a} vs {b}");
    }
}

#[test]
fn unparsable_text_falls_back_to_collapsed_whitespace() {
    assert_eq!(expression(PG, "  this is ) not\n\tsql ( "), "this is ) not sql (");
    assert_eq!(
        default_value(PG, "a b c  d"),
        DefaultValue::Expression("a b c d".to_owned())
    );
}

#[test]
fn defaults_split_literals_from_expressions() {
    let lit = |l: Literal| DefaultValue::Literal(l);
    assert_eq!(
        default_value(PG, "'draft'::invoice_state"),
        lit(Literal::String("draft".into()))
    );
    assert_eq!(
        default_value(PG, "'-1'::integer"),
        lit(Literal::Number("-1".into()))
    );
    assert_eq!(default_value(PG, "1.50"), lit(Literal::Number("1.5".into())));
    assert_eq!(default_value(PG, "true"), lit(Literal::Bool(true)));
    assert_eq!(default_value(PG, "NULL::text"), lit(Literal::Null));
    assert_eq!(default_value(MY, "TRUE"), lit(Literal::Number("1".into())));
    assert_eq!(default_value(MY, "'abc'"), lit(Literal::String("abc".into())));
    assert_eq!(
        default_value(PG, "now()"),
        DefaultValue::Expression("now()".into())
    );
    assert_eq!(
        default_value(MY, "CURRENT_TIMESTAMP"),
        DefaultValue::Expression("current_timestamp()".into())
    );
    assert_eq!(
        default_value(PG, "nextval('t_id_seq'::regclass)"),
        DefaultValue::Expression("nextval('t_id_seq')".into())
    );
}

#[test]
fn numbers_have_one_canonical_text() {
    for (a, b) in [
        ("1.50", "1.5"),
        ("007", "7"),
        ("+3", "3"),
        ("-0.0", "0"),
        ("0.10", "0.1"),
        ("1.0", "1"),
        ("-2.50", "-2.5"),
        ("1E5", "1e5"),
        // Text without a digit is not a number and keeps its spelling.
        (".", "."),
        ("-.", "-."),
    ] {
        assert_eq!(canonical_number(a), b, "{a}");
    }
}

#[test]
fn date_and_time_literal_defaults_read_as_the_catalogs_print_them() {
    use ptah_schema::normalize::temporal_default;
    use ptah_schema::{DataType, DefaultValue, Literal};
    let lit = |s: &str| DefaultValue::Literal(Literal::String(s.to_owned()));
    let ts = |zoned: bool| DataType::Timestamp {
        precision: None,
        with_time_zone: zoned,
        mysql_datetime: false,
    };
    let time = |zoned: bool| DataType::Time {
        precision: None,
        with_time_zone: zoned,
    };
    for (t, written, catalog) in [
        (ts(true), "2020-01-01 00:00:00", "2020-01-01 00:00:00+00"),
        (ts(true), "2020-01-01T00:00:00Z", "2020-01-01 00:00:00+00"),
        (ts(true), "2020-01-01 00:00:00+00:00", "2020-01-01 00:00:00+00"),
        (ts(true), "2020-01-01", "2020-01-01 00:00:00+00"),
        (ts(true), "2020-01-01 10:00:00+05:30", "2020-01-01 10:00:00+05:30"),
        (ts(false), "2020-01-01 00:00:00.000", "2020-01-01 00:00:00"),
        (ts(false), "2020-01-01 00:00:00.120", "2020-01-01 00:00:00.12"),
        (ts(false), "2020-01-01", "2020-01-01 00:00:00"),
        (time(false), "10:30", "10:30:00"),
        (time(false), "10:30:00.000", "10:30:00"),
        (time(true), "10:30:00", "10:30:00+00"),
    ] {
        assert_eq!(temporal_default(&t, lit(written)), lit(catalog), "{written}");
        assert_eq!(
            temporal_default(&t, lit(catalog)),
            lit(catalog),
            "{catalog} is already canonical"
        );
    }
    for (t, text) in [
        (ts(false), "tomorrow"),
        (ts(false), "2020-01-01 00:00:00+02"),
        (time(false), "1:2:3"),
        (DataType::Text, "2020-01-01T00:00:00"),
    ] {
        assert_eq!(temporal_default(&t, lit(text)), lit(text), "{text} is left alone");
    }
    let expr = DefaultValue::Expression("now()".into());
    assert_eq!(temporal_default(&ts(true), expr.clone()), expr);
}

/// Parentheses the catalog prints and the author writes fold away, but never those that hold an
/// `IS`, `NOT`, `BETWEEN`, `IN` or `LIKE` operand together: `a IS NULL <> b IS NULL` means
/// `a IS (NULL <> b) IS NULL` to PostgreSQL and fails on a numeric `b`.
#[test]
fn operands_of_lower_precedence_keep_their_parentheses() {
    for dialect in [Dialect::Postgres, Dialect::Mysql] {
        let written = expression(dialect, "(percent_off IS NULL) <> (amount_off IS NULL)");
        assert_eq!(
            written, "(percent_off is null) <> (amount_off is null)",
            "{dialect:?}"
        );
        assert_eq!(
            expression(dialect, "(((percent_off IS NULL) <> (amount_off IS NULL)))"),
            written
        );
        assert_eq!(expression(dialect, "(NOT a) = b"), "(not a) = b", "{dialect:?}");
        assert_eq!(
            expression(dialect, "(x BETWEEN 1 AND 2) = flag"),
            expression(dialect, "((x BETWEEN 1 AND 2)) = flag")
        );
        assert_eq!(
            expression(dialect, "(code LIKE 'a%') AND (n IN (1, 2))"),
            "code like 'a%' and n in (1, 2)"
        );
    }
}

/// Inside `ARRAY[…]` a literal's cast is what types it, so it is kept there (and only there).
#[test]
fn casts_that_type_array_elements_are_kept() {
    let catalog = expression(
        Dialect::Postgres,
        "(status <> ALL (ARRAY['delivered'::app.order_status, 'cancelled'::app.order_status]))",
    );
    assert!(
        catalog.contains("cast('delivered' as app.order_status)"),
        "{catalog}"
    );
    let written = expression(
        Dialect::Postgres,
        "status <> ALL (ARRAY[CAST('delivered' AS app.order_status), 'cancelled'::app.order_status])",
    );
    assert_eq!(written, catalog);
    assert_eq!(
        expression(Dialect::Postgres, "state <> 'paid'::app.status"),
        "state <> 'paid'"
    );
    assert_eq!(
        expression(Dialect::Postgres, "CAST('7' AS integer) = n"),
        expression(Dialect::Postgres, "7 = n")
    );
}

/// Found by the `schema_sql` fuzz campaign: `Abc\n-- note\nmore` does not parse, so it was kept
/// with its whitespace collapsed, `Abc -- note more`; that text parses (the comment now runs to
/// the end), so normalizing it again gave `abc`. Normalizing is now the same once or twice.
#[test]
fn normalizing_is_idempotent_when_a_comment_spans_collapsed_lines() {
    for text in [
        "Abc\n\n-- Dump TABLE `t` (\n  `id` int(11)",
        "a > 0 -- note\n)",
        "VALUE ~ 'x'\n-- trailing\n",
        "((a))",
        "f(\n-- c\n1)",
    ] {
        for dialect in [PG, MY] {
            let once = expression(dialect, text);
            assert_eq!(expression(dialect, &once), once, "{dialect:?} {text:?}");
            let default = default_value(dialect, text);
            let again = match &default {
                DefaultValue::Expression(e) => default_value(dialect, e),
                DefaultValue::Literal(_) => default.clone(),
            };
            assert_eq!(again, default, "{dialect:?} {text:?}");
        }
    }
}

#[test]
fn a_dump_qualified_public_function_is_the_catalog_unqualified_one() {
    assert_eq!(
        expression(PG, "public.is_code(VALUE)"),
        expression(PG, "is_code(value)")
    );
    assert_ne!(
        expression(PG, "app.is_code(VALUE)"),
        expression(PG, "is_code(value)")
    );
}
