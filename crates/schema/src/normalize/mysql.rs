//! MySQL spellings that mean the same thing: foreign-key actions and character-set names.

use crate::model::{DefaultValue, Dialect, Literal, ReferentialAction};

/// A MySQL foreign-key action: InnoDB checks NO ACTION immediately, exactly like RESTRICT, and
/// MariaDB reports an action left out as RESTRICT (where MySQL says NO ACTION), so both are
/// RESTRICT here.
pub fn mysql_action(action: ReferentialAction) -> ReferentialAction {
    match action {
        ReferentialAction::NoAction => ReferentialAction::Restrict,
        other => other,
    }
}

/// A MySQL character set or collation name as the catalog spells it: lowercase, and the old
/// `utf8` alias (and its `utf8_…` collations) as `utf8mb3`.
pub fn mysql_charset_name(text: &str) -> String {
    let lower = text.trim().to_ascii_lowercase();
    match lower.strip_prefix("utf8") {
        Some("") => "utf8mb3".to_owned(),
        Some(rest) if rest.starts_with('_') => format!("utf8mb3{rest}"),
        _ => lower,
    }
}

/// A routine parameter's or result's type in canonical form: the type as the model reads it and
/// prints it (`INT` and `int(11)` are `int`), without a `CHARSET`/`CHARACTER SET`/`COLLATE`
/// clause (the server prints the database's character set on a function's result; the model
/// does not hold routine character sets). Text the type reader cannot parse is lowercased with
/// its whitespace collapsed.
pub fn mysql_type(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut kept: Vec<&str> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = words[i].to_ascii_uppercase();
        match w.as_str() {
            "CHARSET" | "COLLATE" => i += 2,
            "CHARACTER" if words.get(i + 1).is_some_and(|n| n.eq_ignore_ascii_case("SET")) => i += 3,
            _ => {
                kept.push(words[i]);
                i += 1;
            }
        }
    }
    let text = kept.join(" ");
    match crate::types::parse_type(crate::model::Dialect::Mysql, &text) {
        Ok(t) => crate::types::render_type(crate::model::Dialect::Mysql, &t),
        Err(_) => text.to_ascii_lowercase(),
    }
}

/// One parameter of a routine, parsed: its mode (procedures only), name and canonical type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MysqlParameter {
    /// `IN`, `OUT` or `INOUT` (a procedure's; `IN` when left out); `None` for a function's.
    pub mode: Option<String>,
    /// The name, unquoted.
    pub name: String,
    /// The type, canonical ([`mysql_type`]).
    pub data_type: String,
}

impl MysqlParameter {
    /// The parameter as the canonical list prints it: ``IN `a` int``.
    pub fn text(&self) -> String {
        let name = super::mysql_quote(&self.name);
        match &self.mode {
            Some(mode) => format!("{mode} {name} {}", self.data_type),
            None => format!("{name} {}", self.data_type),
        }
    }
}

/// The canonical parameter list: each [`MysqlParameter::text`], joined with `, `.
pub fn mysql_parameter_list(parameters: &[MysqlParameter]) -> String {
    parameters
        .iter()
        .map(MysqlParameter::text)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A parameter list as written (between the parentheses of `CREATE PROCEDURE p(…)`), in canonical
/// form; `Err` names the parameter that cannot be read.
pub fn mysql_parameters(text: &str, procedure: bool) -> Result<String, String> {
    let mut out = Vec::new();
    for part in split_top_level(text) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (first, rest) = split_word(part);
        let (mode, rest) = match first.to_ascii_uppercase().as_str() {
            m @ ("IN" | "OUT" | "INOUT") if procedure => (Some(m.to_owned()), rest),
            _ if procedure => (Some("IN".to_owned()), part),
            _ => (None, part),
        };
        let (name, data_type) = if let Some(quoted) = rest.strip_prefix('`') {
            let end = closing_backtick(quoted).ok_or_else(|| format!("parameter {part}"))?;
            (quoted[..end].replace("``", "`"), &quoted[end + 1..])
        } else {
            let (n, t) = split_word(rest);
            (n.to_owned(), t)
        };
        if name.is_empty() || data_type.trim().is_empty() {
            return Err(format!("parameter {part}"));
        }
        out.push(MysqlParameter {
            mode,
            name,
            data_type: mysql_type(data_type),
        });
    }
    Ok(mysql_parameter_list(&out))
}

/// The first whitespace-separated word and the rest, trimmed.
fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.find(char::is_whitespace) {
        Some(i) => (&text[..i], text[i..].trim_start()),
        None => (text, ""),
    }
}

/// Where the backtick that closes a quoted name is (a doubled one is an escape).
fn closing_backtick(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            if b.get(i + 1) == Some(&b'`') {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Splits at commas outside parentheses and quotes (`enum('a,b')`, `decimal(5,2)`).
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None::<char>, 0);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                if chars.peek().is_some_and(|(_, n)| *n == q) {
                    chars.next();
                } else {
                    quote = None;
                }
            }
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// A routine's or event's SQL data access in canonical form: `None` for the default `CONTAINS
/// SQL`, else the words uppercase with single spaces.
pub fn mysql_data_access(text: &str) -> Option<String> {
    let words = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    (words != "CONTAINS SQL" && !words.is_empty()).then_some(words)
}

/// What separates a column's default from its `ON UPDATE` expression in the one text that holds
/// both ([`mysql_on_update_default`]).
const ON_UPDATE: &str = " ON UPDATE ";

/// A MySQL column's default together with its `ON UPDATE` expression, as the model holds them:
/// one expression default, `<default> ON UPDATE <expression>` (`current_timestamp(3) ON UPDATE
/// current_timestamp(3)`, `NULL ON UPDATE current_timestamp()`), each part canonical. Held with
/// the default, a change to either is one `MODIFY COLUMN` with the whole definition, and no
/// statement that rewrites the column loses it.
pub fn mysql_on_update_default(
    data_type: &crate::model::DataType,
    default: Option<DefaultValue>,
    on_update: &str,
) -> DefaultValue {
    let on_update = match super::default_value(Dialect::Mysql, on_update) {
        DefaultValue::Expression(e) => e,
        DefaultValue::Literal(l) => literal_text(&l),
    };
    let default = match default.map(|d| super::temporal_default(data_type, d)) {
        None => "NULL".to_owned(),
        Some(DefaultValue::Literal(l)) => literal_text(&l),
        Some(DefaultValue::Expression(e)) => e,
    };
    DefaultValue::Expression(format!("{default}{ON_UPDATE}{on_update}"))
}

/// The default and the `ON UPDATE` expression of a text [`mysql_on_update_default`] made, or
/// `None` for an ordinary default.
pub fn mysql_split_on_update(text: &str) -> Option<(DefaultValue, &str)> {
    let (default, on_update) = text.split_once(ON_UPDATE)?;
    Some((super::default_value(Dialect::Mysql, default), on_update))
}

/// A literal as MySQL spells it in a default.
fn literal_text(l: &Literal) -> String {
    match l {
        Literal::Null => "NULL".to_owned(),
        Literal::Bool(true) => "TRUE".to_owned(),
        Literal::Bool(false) => "FALSE".to_owned(),
        Literal::Number(n) => n.clone(),
        Literal::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_canonical() {
        assert_eq!(
            mysql_parameters(
                "IN p_film_id INT, p INT(11), OUT `x y` varchar(5) CHARSET utf8mb4",
                true
            ),
            Ok("IN `p_film_id` int, IN `p` int, OUT `x y` varchar(5)".to_owned())
        );
        assert_eq!(
            mysql_parameters("a decimal(5,2), b TINYINT(1), c enum('a,b','c')", false),
            Ok("`a` decimal(5,2), `b` tinyint(1), `c` enum('a,b','c')".to_owned())
        );
        assert_eq!(mysql_parameters("", true), Ok(String::new()));
        assert_eq!(mysql_type("bigint(20) unsigned"), "bigint unsigned");
        assert_eq!(
            mysql_type("varchar(100) CHARSET utf8mb4 COLLATE utf8mb4_general_ci"),
            "varchar(100)"
        );
    }

    #[test]
    fn on_update_travels_with_the_default() {
        let ts = crate::model::DataType::Timestamp {
            precision: Some(3),
            with_time_zone: false,
            mysql_datetime: false,
        };
        let default = Some(super::super::default_value(
            Dialect::Mysql,
            "CURRENT_TIMESTAMP(3)",
        ));
        let both = mysql_on_update_default(&ts, default, "now(3)");
        assert_eq!(
            both,
            DefaultValue::Expression("current_timestamp(3) ON UPDATE current_timestamp(3)".to_owned())
        );
        let DefaultValue::Expression(text) = &both else {
            unreachable!()
        };
        assert_eq!(
            mysql_split_on_update(text),
            Some((
                DefaultValue::Expression("current_timestamp(3)".to_owned()),
                "current_timestamp(3)"
            ))
        );
        assert_eq!(
            mysql_on_update_default(&ts, None, "CURRENT_TIMESTAMP"),
            DefaultValue::Expression("NULL ON UPDATE current_timestamp()".to_owned())
        );
    }

    #[test]
    fn data_access_defaults_to_none() {
        assert_eq!(mysql_data_access("contains  sql"), None);
        assert_eq!(
            mysql_data_access("READS SQL DATA"),
            Some("READS SQL DATA".to_owned())
        );
    }
}
