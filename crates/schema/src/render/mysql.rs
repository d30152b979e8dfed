//! MySQL and MariaDB statements.

use super::severity::type_change;
use super::sql::Sql;
use super::{MysqlFlavor, stmt};
use crate::diff::{ColumnAspect, ColumnChange, Constraint, TableOptionsChange};
use crate::model::{Column, Dialect, ForeignKey, Index, QualifiedName, ReferentialAction, Table};
use crate::plan::{PlannedStatement, Severity};

const SQL: Sql = Sql {
    dialect: Dialect::Mysql,
};

/// The clause that adds a column without copying the table or blocking writes: only the data
/// dictionary changes (MySQL 8.0.12+, MariaDB 10.3+).
pub const ONLINE_INSTANT: &str = ", ALGORITHM=INSTANT";
/// The clause that changes an index (or, when `INSTANT` is refused, adds a column) in place while
/// writes go on.
pub const ONLINE_INPLACE: &str = ", ALGORITHM=INPLACE, LOCK=NONE";
/// [`ONLINE_INPLACE`] as `CREATE INDEX` spells it.
pub const ONLINE_INDEX: &str = " ALGORITHM=INPLACE LOCK=NONE";

/// CREATE TABLE with columns, primary key, uniques, checks and comment (foreign keys come later).
pub(super) fn create_table(t: &Table) -> PlannedStatement {
    let mut parts: Vec<String> = t.columns.iter().map(|c| SQL.column(c)).collect();
    if let Some(pk) = &t.primary_key {
        parts.push(format!("PRIMARY KEY {}", SQL.columns(&pk.columns)));
    }
    for u in t.uniques.values() {
        parts.push(format!(
            "CONSTRAINT {} UNIQUE {}",
            SQL.ident(&u.name),
            SQL.columns(&u.columns)
        ));
    }
    for c in t.checks.values() {
        parts.push(format!(
            "CONSTRAINT {} CHECK ({})",
            SQL.ident(&c.name),
            c.expression
        ));
    }
    let mut sql = format!(
        "CREATE TABLE {} ({}) ENGINE=InnoDB{}",
        SQL.qualified(&t.name),
        parts.join(", "),
        charset_options(t.charset.as_deref(), t.collation.as_deref())
    );
    if let Some(comment) = &t.comment {
        sql.push_str(&format!(" COMMENT={}", SQL.string(comment)));
    }
    // The canonical `PARTITION BY …` clause (`normalize::MysqlPartitioning`) is valid SQL as it is.
    if let Some(partitioning) = &t.partition_by {
        sql.push('\n');
        sql.push_str(partitioning);
    }
    stmt(sql, Severity::Safe, "creates a table")
}

pub(super) fn drop_table(t: &Table) -> PlannedStatement {
    let sql = format!("DROP TABLE {}", SQL.qualified(&t.name));
    stmt(sql, Severity::Destructive, "drops a table and its rows")
}

pub(super) fn table_comment(table: &QualifiedName, comment: Option<&str>) -> PlannedStatement {
    let sql = format!(
        "ALTER TABLE {} COMMENT={}",
        SQL.qualified(table),
        SQL.string(comment.unwrap_or_default())
    );
    stmt(sql, Severity::Safe, "sets a table comment")
}

/// ` DEFAULT CHARSET=… COLLATE=…` for what is declared.
fn charset_options(charset: Option<&str>, collation: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(c) = charset {
        out.push_str(&format!(" DEFAULT CHARSET={}", SQL.ident(c)));
    }
    if let Some(c) = collation {
        out.push_str(&format!(" COLLATE={}", SQL.ident(c)));
    }
    out
}

/// A table's default character set and collation: only columns added later take them, existing
/// columns keep theirs (their own changes are column changes).
pub(super) fn table_options(change: &TableOptionsChange) -> PlannedStatement {
    let sql = format!(
        "ALTER TABLE {}{}",
        SQL.qualified(&change.table),
        charset_options(change.charset.as_deref(), change.collation.as_deref())
    );
    stmt(
        sql,
        Severity::Safe,
        "changes the table's default character set or collation",
    )
}

/// `online`: the table may be changed without a copy ([`crate::diff::SchemaDiff::online`]).
pub(super) fn add_column(table: &QualifiedName, c: &Column, online: bool) -> PlannedStatement {
    // A generated column's values are computed into the table: the server copies it (planned in
    // its default form, as before).
    let online = if online && c.generated.is_none() {
        ONLINE_INSTANT
    } else {
        ""
    };
    let sql = format!(
        "ALTER TABLE {} ADD COLUMN {}{online}",
        SQL.qualified(table),
        SQL.column(c)
    );
    if c.nullable {
        stmt(
            sql,
            Severity::Safe,
            "adds a nullable column (INSTANT: writes go on)",
        )
    } else {
        stmt(
            sql,
            Severity::Warning,
            "adds a NOT NULL column: existing rows get the implicit default",
        )
    }
}

pub(super) fn drop_column(table: &QualifiedName, c: &Column) -> PlannedStatement {
    let sql = format!(
        "ALTER TABLE {} DROP COLUMN {}",
        SQL.qualified(table),
        SQL.ident(&c.name)
    );
    stmt(sql, Severity::Destructive, "drops a column and its values")
}

/// One `MODIFY COLUMN` with the full new definition: at least a warning (it rewrites the column),
/// destructive when it narrows the type or drops NOT NULL.
pub(super) fn modify_column(change: &ColumnChange) -> PlannedStatement {
    let sql = format!(
        "ALTER TABLE {} MODIFY COLUMN {}",
        SQL.qualified(&change.table),
        SQL.column(&change.to)
    );
    let aspects: Vec<&str> = change.changes.iter().map(|a| aspect_name(*a)).collect();
    let mut severity = Severity::Warning;
    let mut reason = format!(
        "MODIFY COLUMN rewrites the column definition ({})",
        aspects.join(", ")
    );
    if change.changes.contains(&ColumnAspect::Type) {
        let (s, why) = type_change(&change.from.data_type, &change.to.data_type);
        if s > severity {
            severity = s;
            reason = format!("MODIFY COLUMN {why}");
        }
    }
    if change.changes.contains(&ColumnAspect::Nullability)
        && change.to.nullable
        && severity < Severity::Destructive
    {
        severity = Severity::Destructive;
        reason = "MODIFY COLUMN drops NOT NULL".to_owned();
    }
    if change.changes.contains(&ColumnAspect::Generation)
        && change.from.generated.is_none()
        && severity < Severity::Destructive
    {
        severity = Severity::Destructive;
        reason = "MODIFY COLUMN makes the column generated: its stored values are replaced".to_owned();
    }
    stmt(sql, severity, &reason)
}

fn aspect_name(a: ColumnAspect) -> &'static str {
    match a {
        ColumnAspect::Type => "type",
        ColumnAspect::Nullability => "nullability",
        ColumnAspect::Default => "default",
        ColumnAspect::Identity => "identity",
        ColumnAspect::AutoIncrement => "auto_increment",
        ColumnAspect::Comment => "comment",
        ColumnAspect::Collation => "character set or collation",
        ColumnAspect::Generation => "generation expression",
    }
}

pub(super) fn create_index(table: &QualifiedName, i: &Index) -> PlannedStatement {
    let method = i.method.as_deref().map(str::to_ascii_lowercase);
    let kind = match method.as_deref() {
        Some("fulltext") => "FULLTEXT ",
        Some("spatial") => "SPATIAL ",
        _ if i.unique => "UNIQUE ",
        _ => "",
    };
    let mut sql = format!(
        "CREATE {kind}INDEX {} ON {} {}",
        SQL.ident(&i.name),
        SQL.qualified(table),
        SQL.index_parts(&i.parts)
    );
    if let Some(m @ ("btree" | "hash")) = method.as_deref() {
        sql.push_str(&format!(" USING {}", m.to_ascii_uppercase()));
    }
    // A FULLTEXT or SPATIAL index is built under a lock whatever the clause says, and MariaDB
    // keeps a `USING HASH` unique index in a hidden column the server adds by copying the table.
    if !matches!(method.as_deref(), Some("fulltext" | "spatial" | "hash")) {
        sql.push_str(ONLINE_INDEX);
    }
    if i.unique {
        stmt(
            sql,
            Severity::Warning,
            "creates a unique index: fails on duplicate rows",
        )
    } else {
        stmt(sql, Severity::Safe, "creates an index")
    }
}

pub(super) fn drop_index(table: &QualifiedName, i: &Index, online: bool) -> PlannedStatement {
    // `DROP INDEX … ON … ALGORITHM=…` is MySQL's spelling only: MariaDB takes the clause in
    // `ALTER TABLE`.
    let sql = format!(
        "ALTER TABLE {} DROP INDEX {}{}",
        SQL.qualified(table),
        SQL.ident(&i.name),
        if online { ONLINE_INPLACE } else { "" }
    );
    stmt(
        sql,
        Severity::Destructive,
        "DROP INDEX on MySQL: can remove uniqueness or an FK's index",
    )
}

pub(super) fn add_constraint(table: &QualifiedName, c: &Constraint) -> PlannedStatement {
    let body = match c {
        Constraint::PrimaryKey(pk) => format!("ADD PRIMARY KEY {}", SQL.columns(&pk.columns)),
        Constraint::Unique(u) => {
            format!(
                "ADD CONSTRAINT {} UNIQUE {}",
                SQL.ident(&u.name),
                SQL.columns(&u.columns)
            )
        }
        Constraint::Check(ch) => format!("ADD CONSTRAINT {} CHECK ({})", SQL.ident(&ch.name), ch.expression),
        Constraint::ForeignKey(fk) => {
            format!("ADD CONSTRAINT {} {}", SQL.ident(&fk.name), foreign_key(fk))
        }
    };
    let sql = format!("ALTER TABLE {} {body}", SQL.qualified(table));
    stmt(
        sql,
        Severity::Warning,
        "adds a constraint: fails on rows that violate it",
    )
}

/// `FOREIGN KEY … REFERENCES … ON DELETE … ON UPDATE …` with both actions always spelled out:
/// InnoDB stores a key declared without an action as `RESTRICT` (and reports it so), so leaving
/// NO ACTION implicit would read back as a different key and be planned again forever.
fn foreign_key(fk: &ForeignKey) -> String {
    format!(
        "FOREIGN KEY {} REFERENCES {} {} ON DELETE {} ON UPDATE {}",
        SQL.columns(&fk.columns),
        SQL.qualified(&fk.referenced_table),
        SQL.columns(&fk.referenced_columns),
        action(fk.on_delete),
        action(fk.on_update)
    )
}

fn action(a: ReferentialAction) -> &'static str {
    match a {
        ReferentialAction::NoAction => "NO ACTION",
        ReferentialAction::Restrict => "RESTRICT",
        ReferentialAction::Cascade => "CASCADE",
        ReferentialAction::SetNull => "SET NULL",
        ReferentialAction::SetDefault => "SET DEFAULT",
    }
}

pub(super) fn drop_constraint(
    table: &QualifiedName,
    c: &Constraint,
    flavor: MysqlFlavor,
) -> PlannedStatement {
    let body = match c {
        Constraint::PrimaryKey(_) => "DROP PRIMARY KEY".to_owned(),
        Constraint::Unique(u) => format!("DROP INDEX {}", SQL.ident(&u.name)),
        Constraint::Check(ch) => match flavor {
            MysqlFlavor::Mysql => format!("DROP CHECK {}", SQL.ident(&ch.name)),
            MysqlFlavor::Mariadb => format!("DROP CONSTRAINT {}", SQL.ident(&ch.name)),
        },
        // InnoDB keeps the index it added for the key (named after it), which inspection hides
        // only while the key exists: drop it with the key, or it reappears as an undeclared index.
        Constraint::ForeignKey(fk) => match flavor {
            MysqlFlavor::Mysql => format!("DROP FOREIGN KEY {}", SQL.ident(&fk.name)),
            MysqlFlavor::Mariadb => format!(
                "DROP FOREIGN KEY {0}, DROP INDEX IF EXISTS {0}",
                SQL.ident(&fk.name)
            ),
        },
    };
    let sql = format!("ALTER TABLE {} {body}", SQL.qualified(table));
    stmt(sql, Severity::Destructive, "drops a constraint")
}
