//! PostgreSQL `CREATE [OR REPLACE] [MATERIALIZED] VIEW name AS query [WITH [NO] DATA]`, read from
//! its tokens so the query keeps its source text: `pg_dump` writes the query exactly as
//! `pg_get_viewdef` prints it, which is what the inspector reads, so the two compare as text.
//!
//! What the model does not hold is refused by name: temporary and recursive views, column lists,
//! `WITH (…)` options (`security_barrier`, `security_invoker`, `check_option`), `WITH … CHECK
//! OPTION`, and a materialized view's access method or tablespace. `WITH [NO] DATA` says whether a
//! materialized view is filled now, which is data, not schema.

use sqlparser::ast::ObjectName;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::model::View;

use super::super::{Location, ReadError};
use super::Reader;
use super::tokens::{keyword, object_name, slice};

/// Whether the statement's tokens start a PostgreSQL view: `CREATE [OR REPLACE] [MATERIALIZED] VIEW`
/// (and the temporary and recursive forms, which [`Reader::create_view`] refuses).
pub(super) fn is_create_view(tokens: &[TokenWithSpan]) -> bool {
    let words: Vec<String> = tokens
        .iter()
        .take(6)
        .map_while(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        })
        .collect();
    words.first().is_some_and(|w| w == "CREATE")
        && words
            .iter()
            .skip(1)
            .find(|w| {
                !matches!(
                    w.as_str(),
                    "OR" | "REPLACE" | "TEMP" | "TEMPORARY" | "RECURSIVE" | "MATERIALIZED"
                )
            })
            .is_some_and(|w| w == "VIEW")
}

impl Reader {
    /// Reads one `CREATE VIEW` statement; `text` is the statement, `tokens` its tokens without
    /// whitespace.
    pub(super) fn create_view(
        &mut self,
        text: &str,
        tokens: &[TokenWithSpan],
        at: Location,
    ) -> Result<(), ReadError> {
        let mut i = 1;
        let mut replace = false;
        let mut materialized = false;
        while let Some(w) = keyword(tokens.get(i)) {
            match w.as_str() {
                "OR" | "REPLACE" => replace = true,
                "MATERIALIZED" => materialized = true,
                "TEMP" | "TEMPORARY" => {
                    return Err(
                        self.unsupported(&at, "CREATE TEMPORARY VIEW (a temporary view is not schema)")
                    );
                }
                "RECURSIVE" => {
                    return Err(self.unsupported(
                        &at,
                        "CREATE RECURSIVE VIEW (write it as a view over a recursive query)",
                    ));
                }
                "VIEW" => break,
                _ => return Err(self.unsupported(&at, format!("CREATE … {w} VIEW"))),
            }
            i += 1;
        }
        i += 1;
        if keyword(tokens.get(i)).as_deref() == Some("IF") {
            return Err(self.unsupported(&at, "CREATE VIEW IF NOT EXISTS"));
        }
        let name = self.qualified(&object_name(tokens, &mut i), &at)?;
        self.check_namespace(&name, &at)?;
        let clause = |t: Option<&TokenWithSpan>| match t.map(|t| &t.token) {
            Some(Token::LParen) => Some("a column list".to_owned()),
            _ => keyword(t),
        };
        match clause(tokens.get(i)).as_deref() {
            Some("AS") => {}
            Some("WITH") => {
                return Err(self.unsupported(
                    &at,
                    format!("view options on {name} (WITH (…): security_barrier, security_invoker and check_option are not modelled)"),
                ));
            }
            Some(other) => return Err(self.unsupported(&at, format!("{other} in CREATE VIEW {name}"))),
            None => return Err(self.unsupported(&at, format!("CREATE VIEW {name} without AS"))),
        }
        let mut end = tokens.len();
        // A trailing `WITH [NO] DATA` or `WITH [CASCADED | LOCAL] CHECK OPTION`.
        let upper: Vec<Option<String>> = tokens.iter().map(|t| keyword(Some(t))).collect();
        let tail = |n: usize| -> Vec<&str> {
            upper[end.saturating_sub(n)..end]
                .iter()
                .map(|w| w.as_deref().unwrap_or(""))
                .collect()
        };
        if end >= 3 && tail(3) == ["WITH", "NO", "DATA"] && materialized {
            end -= 3;
        } else if end >= 2 && tail(2) == ["WITH", "DATA"] && materialized {
            end -= 2;
        } else if tail(2) == ["CHECK", "OPTION"] {
            return Err(self.unsupported(&at, format!("WITH CHECK OPTION on view {name} (not modelled)")));
        }
        let query = tokens.get(i + 1..end).unwrap_or(&[]);
        if query.is_empty() {
            return Err(self.unsupported(&at, format!("CREATE VIEW {name} without a query")));
        }
        let definition = View::canonical_definition(&slice(text, query));
        if self.schema.tables.contains_key(&name) {
            return Err(ReadError::Duplicate {
                at,
                what: format!("relation {name} (a table of that name is declared)"),
            });
        }
        if self.schema.views.contains_key(&name) && !replace {
            return Err(ReadError::Duplicate {
                at,
                what: format!("view {name}"),
            });
        }
        let view = View {
            name: name.clone(),
            materialized,
            definition,
            comment: None,
        };
        self.schema.views.insert(name, view);
        Ok(())
    }

    /// `COMMENT ON [MATERIALIZED] VIEW`.
    pub(super) fn view_comment(
        &mut self,
        name: &ObjectName,
        comment: Option<String>,
        materialized: bool,
        at: Location,
    ) -> Result<(), ReadError> {
        let q = self.qualified(name, &at)?;
        match self.schema.views.get_mut(&q) {
            Some(v) if v.materialized == materialized => {
                v.comment = comment;
                Ok(())
            }
            _ => Err(ReadError::BadReference {
                at,
                what: format!("{}view {q}", if materialized { "materialized " } else { "" }),
            }),
        }
    }
}
