//! MySQL table options: `ENGINE=InnoDB`, `COMMENT=`, the default character set and collation, and
//! the `AUTO_INCREMENT=` counter a dump writes (skipped and reported).

use sqlparser::ast::{CreateTableOptions, Expr, ObjectName, SqlOption, Value};

use crate::model::{Dialect, Table};
use crate::normalize::mysql_charset_name;

use super::super::{IgnoreReason, Location, ReadError};
use super::Reader;
use super::table::comment_text;

impl Reader {
    pub(super) fn table_options(
        &mut self,
        table: &mut Table,
        options: &CreateTableOptions,
        at: &Location,
    ) -> Result<(), ReadError> {
        let list = match options {
            CreateTableOptions::None => return Ok(()),
            CreateTableOptions::Plain(list) if self.dialect == Dialect::Mysql => list,
            other => return Err(self.unsupported(at, format!("table options {other}"))),
        };
        for option in list {
            match option {
                SqlOption::Comment(c) => table.comment = Some(comment_text(c)),
                SqlOption::NamedParenthesizedList(l)
                    if l.key.value.eq_ignore_ascii_case("engine")
                        && l.values.is_empty()
                        && l.name
                            .as_ref()
                            .is_some_and(|n| n.value.eq_ignore_ascii_case("innodb")) => {}
                SqlOption::KeyValue { key, value } if let Some(kind) = charset_key(key) => {
                    let name = Some(mysql_charset_name(&option_text(value)));
                    match kind {
                        CharsetKey::Charset => table.charset = name,
                        CharsetKey::Collation => table.collation = name,
                    }
                }
                SqlOption::KeyValue { key, value }
                    if key.to_string().eq_ignore_ascii_case("auto_increment") =>
                {
                    let text = format!("AUTO_INCREMENT={value} (table {})", table.name);
                    self.ignore(at.clone(), IgnoreReason::AutoIncrementCounter, &text);
                }
                other => return Err(self.unsupported(at, format!("table option {other}"))),
            }
        }
        Ok(())
    }
}

/// Which of a table's character-set options a key is (`DEFAULT CHARSET`, `CHARACTER SET`,
/// `DEFAULT COLLATE`…).
enum CharsetKey {
    Charset,
    Collation,
}

fn charset_key(key: &ObjectName) -> Option<CharsetKey> {
    let text = key.to_string().to_ascii_uppercase();
    match text.strip_prefix("DEFAULT ").unwrap_or(&text) {
        "CHARSET" | "CHARACTER SET" => Some(CharsetKey::Charset),
        "COLLATE" => Some(CharsetKey::Collation),
        _ => None,
    }
}

/// An option's value as text: a name or a string, unquoted.
fn option_text(value: &Expr) -> String {
    match value {
        Expr::Identifier(i) => i.value.clone(),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}
