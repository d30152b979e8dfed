//! SQL spelling shared by both dialects: identifiers, literals, types, column and key clauses.
//!
//! Identifiers are always quoted (`"x"` on PostgreSQL, `` `x` `` on MySQL), so a keyword or a
//! mixed-case name never needs a special case.

use std::collections::BTreeSet;

use crate::model::{
    Column, DataType, DefaultValue, Dialect, ForeignKey, Identity, IdentityOptions, IndexPart, IndexTarget,
    Literal, QualifiedName, ReferentialAction,
};
use crate::types::render_type;

/// Spelling rules for one dialect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sql {
    /// The dialect.
    pub dialect: Dialect,
}

impl Sql {
    /// A quoted identifier.
    pub fn ident(&self, name: &str) -> String {
        match self.dialect {
            Dialect::Postgres => format!("\"{}\"", name.replace('"', "\"\"")),
            Dialect::Mysql => format!("`{}`", name.replace('`', "``")),
        }
    }

    /// A quoted, schema-qualified name (unqualified when the schema is empty).
    pub fn qualified(&self, name: &QualifiedName) -> String {
        if name.schema.is_empty() {
            self.ident(&name.name)
        } else {
            format!("{}.{}", self.ident(&name.schema), self.ident(&name.name))
        }
    }

    /// A string literal (MySQL also escapes backslashes).
    pub fn string(&self, value: &str) -> String {
        let doubled = value.replace('\'', "''");
        match self.dialect {
            Dialect::Postgres => format!("'{doubled}'"),
            Dialect::Mysql => format!("'{}'", doubled.replace('\\', "\\\\")),
        }
    }

    /// A constant.
    pub fn literal(&self, value: &Literal) -> String {
        match value {
            Literal::Null => "NULL".into(),
            Literal::Bool(true) => "TRUE".into(),
            Literal::Bool(false) => "FALSE".into(),
            Literal::Number(n) => n.clone(),
            Literal::String(s) => self.string(s),
        }
    }

    /// A column type; enum names are quoted like every other identifier.
    pub fn data_type(&self, data_type: &DataType) -> String {
        match (self.dialect, data_type) {
            (Dialect::Postgres, DataType::Enum(name)) => self.qualified(name),
            (Dialect::Postgres, DataType::Array(inner)) => format!("{}[]", self.data_type(inner)),
            _ => render_type(self.dialect, data_type),
        }
    }

    /// A default's SQL (MySQL expression defaults are parenthesized, except the timestamp forms).
    pub fn default(&self, value: &DefaultValue) -> String {
        match value {
            DefaultValue::Literal(l) => self.literal(l),
            // `DEFAULT` takes a restricted expression (no `AT TIME ZONE`, no `IS`, no `AND`):
            // anything with a space outside parentheses and quotes goes in parentheses.
            DefaultValue::Expression(e) if self.dialect == Dialect::Postgres => {
                if crate::normalize::has_top_level_space(e) {
                    format!("({e})")
                } else {
                    e.clone()
                }
            }
            // A MySQL default held with its `ON UPDATE` (`normalize::mysql_on_update_default`).
            DefaultValue::Expression(e)
                if let Some((default, on_update)) = crate::normalize::mysql_split_on_update(e) =>
            {
                format!("{} ON UPDATE {on_update}", self.default(&default))
            }
            DefaultValue::Expression(e) => {
                let lower = e.to_ascii_lowercase();
                let bare = ["current_timestamp", "now(", "localtime", "current_date", "("];
                if bare.iter().any(|p| lower.starts_with(p)) {
                    e.clone()
                } else {
                    format!("({e})")
                }
            }
        }
    }

    /// A column definition as in CREATE TABLE / ADD COLUMN / MODIFY COLUMN.
    pub fn column(&self, column: &Column) -> String {
        let mut out = format!(
            "{} {}",
            self.ident(&column.name),
            self.data_type(&column.data_type)
        );
        match self.dialect {
            Dialect::Postgres => {
                if let Some(c) = &column.collation {
                    out.push_str(&format!(" COLLATE {}", self.ident(c)));
                }
                if let Some(g) = &column.generated {
                    out.push_str(&format!(" GENERATED ALWAYS AS ({}) STORED", g.expression));
                }
                if let Some(identity) = column.identity {
                    out.push_str(&format!(" GENERATED {} AS IDENTITY", identity_kind(identity)));
                    if let Some(o) = &column.identity_options {
                        out.push_str(&format!(" ({})", identity_options(o, "")));
                    }
                }
                if !column.nullable {
                    out.push_str(" NOT NULL");
                }
                if let Some(d) = &column.default {
                    out.push_str(&format!(" DEFAULT {}", self.default(d)));
                }
            }
            Dialect::Mysql => {
                if let Some(c) = &column.charset {
                    out.push_str(&format!(" CHARACTER SET {}", self.ident(c)));
                }
                if let Some(c) = &column.collation {
                    out.push_str(&format!(" COLLATE {}", self.ident(c)));
                }
                if let Some(g) = &column.generated {
                    let kind = if g.stored { "STORED" } else { "VIRTUAL" };
                    out.push_str(&format!(" GENERATED ALWAYS AS ({}) {kind}", g.expression));
                    // MariaDB takes no NULL clause on a generated column; MySQL takes NOT NULL.
                    if !column.nullable {
                        out.push_str(" NOT NULL");
                    }
                } else {
                    out.push_str(if column.nullable { " NULL" } else { " NOT NULL" });
                }
                if let Some(d) = &column.default {
                    out.push_str(&format!(" DEFAULT {}", self.default(d)));
                }
                if column.auto_increment {
                    out.push_str(" AUTO_INCREMENT");
                }
                if let Some(c) = &column.comment {
                    out.push_str(&format!(" COMMENT {}", self.string(c)));
                }
            }
        }
        out
    }

    /// `(a, b)`.
    pub fn columns(&self, names: &[String]) -> String {
        let quoted: Vec<String> = names.iter().map(|n| self.ident(n)).collect();
        format!("({})", quoted.join(", "))
    }

    /// `FOREIGN KEY (…) REFERENCES t (…) [ON DELETE …] [ON UPDATE …]`.
    pub fn foreign_key(&self, fk: &ForeignKey) -> String {
        let mut out = format!(
            "FOREIGN KEY {} REFERENCES {} {}",
            self.columns(&fk.columns),
            self.qualified(&fk.referenced_table),
            self.columns(&fk.referenced_columns)
        );
        if fk.options.match_full {
            out.push_str(" MATCH FULL");
        }
        if let Some(action) = action(fk.on_delete) {
            out.push_str(&format!(" ON DELETE {action}"));
        }
        if let Some(action) = action(fk.on_update) {
            out.push_str(&format!(" ON UPDATE {action}"));
        }
        if fk.options.deferrable {
            out.push_str(" DEFERRABLE");
        }
        if fk.options.initially_deferred {
            out.push_str(" INITIALLY DEFERRED");
        }
        out
    }

    /// The parenthesized part list of an index.
    pub fn index_parts(&self, parts: &[IndexPart]) -> String {
        let rendered: Vec<String> = parts
            .iter()
            .map(|p| {
                let mut out = match &p.target {
                    IndexTarget::Column(c) => self.ident(c),
                    IndexTarget::Expression(e) => format!("({e})"),
                };
                if let Some(n) = p.prefix_length.filter(|_| self.dialect == Dialect::Mysql) {
                    out.push_str(&format!("({n})"));
                }
                if let Some(opclass) = p.opclass.as_deref().filter(|_| self.dialect == Dialect::Postgres) {
                    out.push(' ');
                    out.push_str(opclass);
                }
                if p.descending {
                    out.push_str(" DESC");
                }
                match p.nulls_first.filter(|_| self.dialect == Dialect::Postgres) {
                    Some(true) => out.push_str(" NULLS FIRST"),
                    Some(false) => out.push_str(" NULLS LAST"),
                    None => {}
                }
                out
            })
            .collect();
        format!("({})", rendered.join(", "))
    }

    /// `a = 1 AND b IS NULL`, for the key of a reference row.
    pub fn key_predicate(&self, key: &[(String, Literal)]) -> String {
        let parts: Vec<String> = key
            .iter()
            .map(|(c, v)| match v {
                Literal::Null => format!("{} IS NULL", self.ident(c)),
                _ => format!("{} = {}", self.ident(c), self.literal(v)),
            })
            .collect();
        parts.join(" AND ")
    }
}

/// A PostgreSQL column spelled as `serial`/`bigserial`/`smallserial` when its default is exactly
/// the `nextval` of the sequence a serial column of that name gets and that sequence is not one of
/// the `declared` ones (those are created before the tables): the implicit sequence does not exist
/// before the column, so `DEFAULT nextval(...)` alone would fail. Other columns as [`Sql::column`].
pub(crate) fn pg_column(
    table: &QualifiedName,
    column: &Column,
    declared: &BTreeSet<QualifiedName>,
) -> String {
    let sql = Sql {
        dialect: Dialect::Postgres,
    };
    let kind = match column.data_type {
        DataType::Integer {
            bits: 16,
            unsigned: false,
        } => "smallserial",
        DataType::Integer {
            bits: 32,
            unsigned: false,
        } => "serial",
        DataType::Integer {
            bits: 64,
            unsigned: false,
        } => "bigserial",
        _ => return sql.column(column),
    };
    let sequence = crate::names::pg_object_name(&table.name, Some(&column.name), "seq");
    let serial = DefaultValue::Expression(crate::names::serial_default(table, &sequence));
    if column.identity.is_some()
        || column.nullable
        || column.default.as_ref() != Some(&serial)
        || declared.contains(&QualifiedName::new(&table.schema, &sequence))
    {
        return sql.column(column);
    }
    format!("{} {kind} NOT NULL", sql.ident(&column.name))
}

/// An identity's sequence options, each after `prefix` (`""` in a column definition, `SET ` in
/// `ALTER COLUMN`): `START WITH 10 INCREMENT BY 5 MINVALUE 1 MAXVALUE 100 CACHE 1 NO CYCLE`.
pub(crate) fn identity_options(o: &IdentityOptions, prefix: &str) -> String {
    let cycle = if o.cycle { "CYCLE" } else { "NO CYCLE" };
    [
        format!("START WITH {}", o.start),
        format!("INCREMENT BY {}", o.increment),
        format!("MINVALUE {}", o.min),
        format!("MAXVALUE {}", o.max),
        format!("CACHE {}", o.cache),
        cycle.to_owned(),
    ]
    .iter()
    .map(|clause| format!("{prefix}{clause}"))
    .collect::<Vec<_>>()
    .join(" ")
}

/// `ALWAYS` or `BY DEFAULT`.
pub(crate) fn identity_kind(identity: Identity) -> &'static str {
    match identity {
        Identity::Always => "ALWAYS",
        Identity::ByDefault => "BY DEFAULT",
    }
}

/// The clause for a referential action; `None` for the default, NO ACTION.
fn action(a: ReferentialAction) -> Option<&'static str> {
    match a {
        ReferentialAction::NoAction => None,
        ReferentialAction::Restrict => Some("RESTRICT"),
        ReferentialAction::Cascade => Some("CASCADE"),
        ReferentialAction::SetNull => Some("SET NULL"),
        ReferentialAction::SetDefault => Some("SET DEFAULT"),
    }
}
