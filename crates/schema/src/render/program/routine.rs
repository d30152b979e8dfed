//! PostgreSQL `CREATE [OR REPLACE] FUNCTION|PROCEDURE|AGGREGATE` as a plan writes it: the
//! signature as the catalog prints it, the attributes the model holds, and the body in a dollar
//! quote its text does not contain.

use super::super::sql::Sql;
use crate::model::{Dialect, Parallel, Routine, RoutineKind, RoutineOptions, Volatility};

/// The keyword that names `r`'s kind after `CREATE`, `DROP` and `COMMENT ON`.
pub(super) fn routine_kind(r: &Routine) -> &'static str {
    match r.kind {
        RoutineKind::Function => "FUNCTION",
        RoutineKind::Procedure => "PROCEDURE",
        RoutineKind::Aggregate => "AGGREGATE",
    }
}

/// The PostgreSQL `CREATE FUNCTION|PROCEDURE` statement for `r`, as a plan writes it.
pub fn create_routine_statement(r: &Routine) -> String {
    create_routine(
        Sql {
            dialect: Dialect::Postgres,
        },
        r,
        false,
    )
}

/// `CREATE [OR REPLACE] FUNCTION|PROCEDURE`, the body in a dollar quote its text does not contain.
pub(crate) fn create_routine(sql: Sql, r: &Routine, replace: bool) -> String {
    let mut s = String::from("CREATE ");
    if replace {
        s.push_str("OR REPLACE ");
    }
    if r.kind == RoutineKind::Aggregate {
        s.push_str(&format!(
            "AGGREGATE {}({}) (\n    {}\n)",
            sql.qualified(&r.name),
            r.arguments,
            r.body
        ));
        return s;
    }
    s.push_str(&format!(
        "{} {}({})",
        routine_kind(r),
        sql.qualified(&r.name),
        r.arguments
    ));
    if let Some(returns) = &r.returns {
        s.push_str(&format!(" RETURNS {returns}"));
    }
    s.push_str(&format!(" LANGUAGE {}", r.language));
    if r.kind == RoutineKind::Function {
        match r.volatility {
            Volatility::Volatile => {}
            Volatility::Stable => s.push_str(" STABLE"),
            Volatility::Immutable => s.push_str(" IMMUTABLE"),
        }
        if r.strict {
            s.push_str(" STRICT");
        }
    }
    if r.security_definer {
        s.push_str(" SECURITY DEFINER");
    }
    s.push_str(&routine_options(sql, &r.options));
    let tag = dollar_tag(&r.body);
    s.push_str(&format!("\n    AS {tag}{}{tag}", r.body));
    s
}

/// `$$`, or `$ptah$`, `$ptah1$`, … : the first dollar quote that `body` does not contain.
fn dollar_tag(body: &str) -> String {
    if !body.contains("$$") {
        return "$$".to_owned();
    }
    (0..)
        .map(|n: u32| {
            if n == 0 {
                "$ptah$".to_owned()
            } else {
                format!("$ptah{n}$")
            }
        })
        .find(|t| !body.contains(t.as_str()))
        .unwrap_or_else(|| unreachable!("an unbounded sequence of tags"))
}

/// ` LEAKPROOF PARALLEL SAFE COST 10 ROWS 5 SET search_path TO public, pg_temp`, for what is set.
fn routine_options(sql: Sql, o: &RoutineOptions) -> String {
    let mut s = String::new();
    if o.leakproof {
        s.push_str(" LEAKPROOF");
    }
    match o.parallel {
        None => {}
        Some(Parallel::Safe) => s.push_str(" PARALLEL SAFE"),
        Some(Parallel::Restricted) => s.push_str(" PARALLEL RESTRICTED"),
    }
    if let Some(c) = &o.cost {
        s.push_str(&format!(" COST {c}"));
    }
    if let Some(r) = &o.rows {
        s.push_str(&format!(" ROWS {r}"));
    }
    for setting in &o.settings {
        let Some((name, value)) = setting.split_once('=') else {
            continue;
        };
        // A list of names is valid SQL as the catalog keeps it; any other value is one string.
        let value = if RoutineOptions::quotes_names(name) {
            value.to_owned()
        } else {
            sql.string(value)
        };
        s.push_str(&format!("\n    SET {name} TO {value}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_keeps_its_own_dollar_quotes() {
        assert_eq!(dollar_tag("SELECT 1"), "$$");
        assert_eq!(dollar_tag("SELECT $$x$$"), "$ptah$");
        assert_eq!(dollar_tag("$$ $ptah$"), "$ptah1$");
    }
}
