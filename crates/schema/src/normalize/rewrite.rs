//! The rewrite of a parsed expression into its canonical form: parentheses by precedence, casts,
//! identifier quoting. Kept apart from the entry points so the parse-and-compare surface stays
//! small and the node-by-node rules read on their own.

use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, CastKind, DataType as SqlType, Expr, FunctionArg, FunctionArgExpr, FunctionArgumentList,
    FunctionArguments, Ident, ObjectName, ObjectNamePart, UnaryOperator, Value, visit_expressions_mut,
};
use sqlparser::keywords::ALL_KEYWORDS;

use crate::model::Dialect;

pub(super) fn rewrite(dialect: Dialect, mut expr: Expr) -> Expr {
    let _ = visit_expressions_mut(&mut expr, |e| {
        keep_array_casts(e);
        ControlFlow::<()>::Continue(())
    });
    let _ = visit_expressions_mut(&mut expr, |e| {
        rewrite_node(dialect, e);
        ControlFlow::<()>::Continue(())
    });
    // The visitor rewrites children before parents, so the root is done; a top-level
    // parenthesis left by wrapping is never needed.
    while let Expr::Nested(inner) = expr {
        expr = *inner;
    }
    expr
}

/// A literal's cast is dropped (`'paid'::app.status` compares equal to `'paid'`, whose type the
/// column gives), except inside `ARRAY[…]`, where nothing else types the elements: `status <> ALL
/// (ARRAY['paid'::app.status])` without it compares an enum with text and fails. Every cast is
/// first spelled `::`; the kept ones are then spelled `CAST(… AS …)`, which the rewrite leaves.
fn keep_array_casts(e: &mut Expr) {
    match e {
        Expr::Cast { kind, .. } if *kind == CastKind::Cast => *kind = CastKind::DoubleColon,
        Expr::Array(array) => {
            for element in &mut array.elem {
                if let Expr::Cast {
                    kind,
                    expr,
                    format: None,
                    ..
                } = element
                    && matches!(expr.as_ref(), Expr::Value(_))
                {
                    *kind = CastKind::Cast;
                }
            }
        }
        _ => {}
    }
}

fn is_numeric_type(t: &SqlType) -> bool {
    let name = t.to_string().to_ascii_lowercase();
    let base = name.split('(').next().unwrap_or("").trim();
    matches!(
        base,
        "smallint"
            | "integer"
            | "int"
            | "bigint"
            | "int2"
            | "int4"
            | "int8"
            | "numeric"
            | "decimal"
            | "real"
            | "double precision"
            | "float4"
            | "float8"
            | "float"
            | "double"
    )
}

/// `nextval('public.s')` is `nextval('s')`: a dump qualifies every name (its `search_path` is
/// empty) where the catalog, read with the default `search_path`, does not.
fn unqualify_public_sequence(args: &mut FunctionArguments) {
    let FunctionArguments::List(list) = args else {
        return;
    };
    if let [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] = list.args.as_mut_slice()
        && let Value::SingleQuotedString(s) = &mut v.value
        && let Some(rest) = s.strip_prefix("public.")
    {
        *s = rest.to_owned();
    }
}

fn rewrite_node(dialect: Dialect, e: &mut Expr) {
    let replacement = match e {
        Expr::Nested(inner) => Some(std::mem::replace(inner.as_mut(), Expr::value(Value::Null))),
        // PostgreSQL's parser turns `x BETWEEN a AND b` into `x >= a AND x <= b` (NOT BETWEEN:
        // `x < a OR x > b`), and the catalog prints that form.
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } if dialect == Dialect::Postgres => {
            let take = |b: &mut Box<Expr>| std::mem::replace(b.as_mut(), Expr::value(Value::Null));
            let (x, low, high) = (take(expr), take(low), take(high));
            let (low_op, high_op, join) = if *negated {
                (BinaryOperator::Lt, BinaryOperator::Gt, BinaryOperator::Or)
            } else {
                (BinaryOperator::GtEq, BinaryOperator::LtEq, BinaryOperator::And)
            };
            let compare = |left: Expr, op: BinaryOperator, right: Expr| {
                let mut node = Expr::BinaryOp {
                    left: Box::new(left),
                    op,
                    right: Box::new(right),
                };
                rewrite_node(dialect, &mut node);
                Box::new(node)
            };
            let left = compare(x.clone(), low_op, low);
            let right = compare(x, high_op, high);
            Some(Expr::BinaryOp {
                left,
                op: join,
                right,
            })
        }
        Expr::Cast {
            kind: CastKind::DoubleColon,
            expr,
            data_type,
            format: None,
        } => match expr.as_mut() {
            Expr::Value(v) => {
                let value = std::mem::replace(&mut v.value, Value::Null);
                Some(match value {
                    Value::SingleQuotedString(s) if is_numeric_type(data_type) && is_number(&s) => {
                        Expr::value(Value::Number(s.trim().to_owned(), false))
                    }
                    other => Expr::value(other),
                })
            }
            // A column's cast is kept, even the `(name)::text` the catalog adds over a
            // `varchar`: over an integer it is the expression's meaning (`id::text = $1`), and
            // the normaliser cannot tell the two apart. The differ compares without such casts
            // ([`without_column_text_casts`]), so the catalog's added ones are no drift.
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::Number(n, long) if !n.starts_with('-') => {
                    Some(Expr::value(Value::Number(format!("-{n}"), *long)))
                }
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    if let Some(r) = replacement {
        *e = r;
        // A replacement may itself be a node to rewrite (nested parentheses, a cast inside).
        rewrite_node(dialect, e);
        return;
    }
    match e {
        Expr::Identifier(ident) => unquote(dialect, ident),
        Expr::CompoundIdentifier(idents) => idents.iter_mut().for_each(|i| unquote(dialect, i)),
        Expr::Function(f) => {
            // `public.f(x)` is `f(x)`: a dump qualifies every function (its `search_path` is
            // empty) where the catalog, read with `public` on the path, does not.
            let public = matches!(f.name.0.as_slice(),
                [ObjectNamePart::Identifier(schema), _] if schema.value.eq_ignore_ascii_case("public"));
            if dialect == Dialect::Postgres && public {
                f.name.0.remove(0);
            }
            if let [ObjectNamePart::Identifier(ident)] = f.name.0.as_mut_slice() {
                if ident.quote_style.is_none() {
                    ident.value = ident.value.to_ascii_lowercase();
                }
                if dialect == Dialect::Postgres && ident.value == "nextval" {
                    unqualify_public_sequence(&mut f.args);
                } else if dialect == Dialect::Postgres
                    && PG_TYPE_FUNC_NAME_KEYWORDS.contains(&ident.value.as_str())
                {
                    // The catalog quotes these keywords (`"left"(description, 64)`), yet they need
                    // no quotes as a function name: the same call as an author's `left(…)`.
                    ident.quote_style = None;
                }
                if dialect == Dialect::Mysql
                    && ident.quote_style.is_none()
                    && matches!(
                        ident.value.as_str(),
                        "current_timestamp" | "now" | "localtimestamp" | "localtime"
                    )
                {
                    f.name = ObjectName::from(vec![Ident::new("current_timestamp")]);
                    if matches!(f.args, FunctionArguments::None) {
                        f.args = FunctionArguments::List(FunctionArgumentList {
                            duplicate_treatment: None,
                            args: Vec::new(),
                            clauses: Vec::new(),
                        });
                    }
                }
            }
        }
        Expr::BinaryOp { left, op, right } => {
            let p = precedence(op);
            if operand_precedence(left).is_some_and(|l| l < p) {
                wrap(left);
            }
            if operand_precedence(right).is_some_and(|r| r <= p) {
                wrap(right);
            }
        }
        Expr::UnaryOp { expr, .. }
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::IsNotTrue(expr)
        | Expr::IsNotFalse(expr)
        | Expr::Cast { expr, .. }
        | Expr::Between { expr, .. }
        | Expr::Like { expr, .. }
            if binary_precedence(expr).is_some() =>
        {
            wrap(expr);
        }
        _ => {}
    }
}

/// PostgreSQL's `type_func_name_keyword`s: `pg_get_expr` quotes them, but a function call may name
/// them bare (`left(x, 3)`).
const PG_TYPE_FUNC_NAME_KEYWORDS: [&str; 23] = [
    "authorization",
    "binary",
    "collation",
    "concurrently",
    "cross",
    "current_schema",
    "freeze",
    "full",
    "ilike",
    "inner",
    "is",
    "isnull",
    "join",
    "left",
    "like",
    "natural",
    "notnull",
    "outer",
    "overlaps",
    "right",
    "similar",
    "tablesample",
    "verbose",
];

fn is_number(s: &str) -> bool {
    let t = s.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.matches('.').count() <= 1
        && digits != "."
}

fn wrap(e: &mut Box<Expr>) {
    let inner = std::mem::replace(e.as_mut(), Expr::value(Value::Null));
    **e = Expr::Nested(Box::new(inner));
}

fn binary_precedence(e: &Expr) -> Option<u8> {
    match e {
        Expr::BinaryOp { op, .. } => Some(precedence(op)),
        _ => None,
    }
}

/// How tightly an operand of a binary operator binds, where that can take it apart: `a IS NULL <>
/// b IS NULL` means `a IS (NULL <> b) IS NULL` to PostgreSQL, so an `IS`, `NOT`, `BETWEEN`, `IN`
/// or `LIKE` operand is parenthesized like a binary one of lower precedence.
fn operand_precedence(e: &Expr) -> Option<u8> {
    match e {
        Expr::BinaryOp { op, .. } => Some(precedence(op)),
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            ..
        } => Some(3),
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsNotTrue(_)
        | Expr::IsNotFalse(_)
        | Expr::IsUnknown(_)
        | Expr::IsNotUnknown(_)
        | Expr::IsDistinctFrom(..)
        | Expr::IsNotDistinctFrom(..) => Some(4),
        Expr::Between { .. }
        | Expr::In { .. }
        | Expr::Like { .. }
        | Expr::ILike { .. }
        | Expr::SimilarTo { .. } => Some(6),
        _ => None,
    }
}

/// Binding strength of a binary operator (higher binds tighter), per PostgreSQL and MySQL.
fn precedence(op: &BinaryOperator) -> u8 {
    // NOT is 3, IS 4, BETWEEN/IN/LIKE 6 ([`operand_precedence`]), as in PostgreSQL's table.
    match op {
        BinaryOperator::Or | BinaryOperator::Xor => 1,
        BinaryOperator::And => 2,
        BinaryOperator::Eq
        | BinaryOperator::NotEq
        | BinaryOperator::Lt
        | BinaryOperator::LtEq
        | BinaryOperator::Gt
        | BinaryOperator::GtEq
        | BinaryOperator::Spaceship => 5,
        BinaryOperator::Plus | BinaryOperator::Minus => 8,
        BinaryOperator::Multiply
        | BinaryOperator::Divide
        | BinaryOperator::Modulo
        | BinaryOperator::DuckIntegerDivide
        | BinaryOperator::MyIntegerDivide => 9,
        BinaryOperator::PGExp => 10,
        // Everything else (string concatenation, JSON and containment operators…) sits between
        // BETWEEN/IN/LIKE and addition; parenthesizing conservatively never merges two meanings.
        _ => 7,
    }
}

fn is_plain(value: &str) -> bool {
    value
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && ALL_KEYWORDS
            .binary_search(&value.to_ascii_uppercase().as_str())
            .is_err()
}

fn unquote(dialect: Dialect, ident: &mut Ident) {
    match ident.quote_style {
        None => {
            ident.value = ident.value.to_ascii_lowercase();
            // MySQL catalogs backtick every name and keep the quotes on keywords (`name`); an
            // unquoted keyword parsed as an identifier is the same column, so quote it too.
            if dialect == Dialect::Mysql && !is_plain(&ident.value) {
                ident.quote_style = Some('`');
            }
        }
        Some(_) => {
            // MySQL column names are case-insensitive; PostgreSQL's quoted names are exact.
            let value = match dialect {
                Dialect::Mysql => ident.value.to_ascii_lowercase(),
                Dialect::Postgres => ident.value.clone(),
            };
            if is_plain(&value) {
                ident.value = value;
                ident.quote_style = None;
            } else {
                ident.value = value;
                ident.quote_style = Some(match dialect {
                    Dialect::Postgres => '"',
                    Dialect::Mysql => '`',
                });
            }
        }
    }
}
