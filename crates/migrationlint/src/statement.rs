//! The rules that look at one statement, as the SQL parser reads it for the file's dialect.
//!
//! A statement is classified by its parsed form, and each `ALTER TABLE` operation by the text the
//! parser writes back for it (its keywords normalised, identifiers quoted as written), so a rule
//! does not depend on the spacing, case or comments of the file.

use std::collections::BTreeSet;

use ptah_engine::Dialect;
use sqlparser::{
    ast::{AlterTable, CreateIndex, ObjectName, Statement},
    dialect::{MySqlDialect, PostgreSqlDialect},
    parser::Parser,
};

/// What a rule found: its code and a sentence naming the object.
pub type Hit = (&'static str, String);

/// What the statements before this one in the file have established.
#[derive(Debug, Default)]
pub struct Context {
    /// The file runs in one transaction.
    pub in_transaction: bool,
    /// Tables created earlier in the file: changing them blocks nobody.
    pub created: BTreeSet<String>,
}

/// Parses `sql` for `dialect`; `None` when the parser cannot read it.
pub fn parse(sql: &str, dialect: Dialect) -> Option<Vec<Statement>> {
    match dialect {
        Dialect::Postgres => Parser::parse_sql(&PostgreSqlDialect {}, sql).ok(),
        Dialect::Mysql => Parser::parse_sql(&MySqlDialect {}, sql).ok(),
    }
}

fn key(name: &ObjectName) -> String {
    name.to_string().replace(['"', '`'], "").to_lowercase()
}

/// The rules' findings for `stmt`, updating `ctx` with what it creates.
pub fn check(stmt: &Statement, dialect: Dialect, ctx: &mut Context) -> Vec<Hit> {
    let mut hits = Vec::new();
    let text = stmt.to_string();
    let upper = text.to_uppercase();
    if let Some(name) = created_routine(&upper.split_whitespace().collect::<Vec<_>>()) {
        ctx.created.insert(name);
    }
    match stmt {
        Statement::CreateTable(create) => {
            ctx.created.insert(key(&create.name));
        }
        Statement::CreateIndex(create) => create_index(create, dialect, ctx, &mut hits),
        Statement::AlterTable(alter) => alter_table(alter, dialect, ctx, &mut hits),
        Statement::Drop {
            object_type, names, ..
        } => {
            let what = object_type.to_string().to_uppercase();
            let list = names
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            match what.as_str() {
                "TABLE" => hits.push(("DS101", format!("drops table {list}"))),
                "INDEX" => {
                    let concurrently = upper.starts_with("DROP INDEX CONCURRENTLY");
                    index_concurrency(
                        dialect,
                        ctx,
                        concurrently,
                        "PG106",
                        &format!("drops index {list}"),
                        &mut hits,
                    );
                }
                "SCHEMA" | "TYPE" | "EXTENSION" | "VIEW" | "MATERIALIZED VIEW" | "ROLE" | "SEQUENCE"
                | "DOMAIN" => {
                    hits.push(("DS107", format!("drops {} {list}", what.to_lowercase())));
                }
                _ => {}
            }
        }
        _ if upper.starts_with("DROP FUNCTION") || upper.starts_with("DROP PROCEDURE") => {
            drop_routine(&text, ctx, &mut hits);
        }
        _ if upper.starts_with("TRUNCATE") => hits.push(("DS108", first_words(&text, 3))),
        _ if dialect == Dialect::Postgres && upper.starts_with("CREATE TRIGGER")
            || upper.starts_with("CREATE OR REPLACE TRIGGER") =>
        {
            let table = upper
                .split_whitespace()
                .skip_while(|w| *w != "ON")
                .nth(1)
                .map(|t| t.replace(['"', '`'], "").to_lowercase())
                .unwrap_or_default();
            if !ctx.created.contains(&table) {
                hits.push((
                    "PG306",
                    format!("creates a trigger on {table}: SHARE ROW EXCLUSIVE until commit"),
                ));
            }
        }
        _ if upper.starts_with("ALTER TYPE") && upper.contains(" ADD VALUE") && ctx.in_transaction => {
            hits.push(("PG102", first_words(&text, 3)));
        }
        _ if upper.starts_with("BEGIN")
            || upper.starts_with("START TRANSACTION")
            || upper.starts_with("COMMIT") =>
        {
            hits.push(("TX201", first_words(&text, 2)));
        }
        _ => {}
    }
    hits
}

/// The routine a `CREATE [OR REPLACE] FUNCTION|PROCEDURE` creates, by its lowercase name.
fn created_routine(words: &[&str]) -> Option<String> {
    let rest = match words {
        ["CREATE", "OR", "REPLACE", rest @ ..] | ["CREATE", rest @ ..] => rest,
        _ => return None,
    };
    match rest {
        ["FUNCTION" | "PROCEDURE", name, ..] => Some(routine_name(name)),
        _ => None,
    }
}

fn routine_name(word: &str) -> String {
    word.split('(')
        .next()
        .unwrap_or(word)
        .replace(['"', '`'], "")
        .to_lowercase()
}

/// A dropped routine, unless the file created it (a helper it created, called and drops).
fn drop_routine(text: &str, ctx: &Context, hits: &mut Vec<Hit>) {
    let upper = text.to_uppercase();
    let words: Vec<&str> = upper.split_whitespace().collect();
    let name = words
        .iter()
        .skip(2)
        .find(|w| !matches!(**w, "IF" | "EXISTS"))
        .map(|w| routine_name(w))
        .unwrap_or_default();
    if !ctx.created.contains(&name) {
        hits.push(("DS107", first_words(text, 5).to_lowercase()));
    }
}

/// The findings for a statement the parser cannot read: the forms it does not know but the rules
/// do (`DROP INDEX CONCURRENTLY`, routines), else `SQL001`.
pub fn unparsed(sql: &str, dialect: Dialect, ctx: &mut Context) -> Vec<Hit> {
    let upper = sql.to_uppercase();
    let words: Vec<&str> = upper.split_whitespace().collect();
    let mut hits = Vec::new();
    if let Some(name) = created_routine(&words) {
        ctx.created.insert(name);
    }
    if words.starts_with(&["DROP", "FUNCTION"]) || words.starts_with(&["DROP", "PROCEDURE"]) {
        drop_routine(sql, ctx, &mut hits);
    } else if words.starts_with(&["DROP", "INDEX"]) {
        let concurrently = words.get(2) == Some(&"CONCURRENTLY");
        let what = format!(
            "drops index {}",
            words.last().copied().unwrap_or_default().to_lowercase()
        );
        index_concurrency(dialect, ctx, concurrently, "PG106", &what, &mut hits);
    } else {
        hits.push((
            "SQL001",
            format!("not read by the linter: {}", first_words(sql, 3)),
        ));
    }
    hits
}

/// A CONCURRENTLY index change: a hazard without it on a table that exists, and impossible with it
/// inside a transaction.
fn index_concurrency(
    dialect: Dialect,
    ctx: &Context,
    concurrently: bool,
    code: &'static str,
    what: &str,
    hits: &mut Vec<Hit>,
) {
    if dialect != Dialect::Postgres {
        return;
    }
    if concurrently && ctx.in_transaction {
        hits.push(("PG103", format!("{what} CONCURRENTLY in the file's transaction")));
    } else if !concurrently {
        hits.push((code, what.to_owned()));
    }
}

fn create_index(create: &CreateIndex, dialect: Dialect, ctx: &Context, hits: &mut Vec<Hit>) {
    let table = key(&create.table_name);
    let what = format!(
        "creates index {} on {}",
        create
            .name
            .as_ref()
            .map_or_else(|| "(unnamed)".to_owned(), ToString::to_string),
        create.table_name
    );
    // An index on a table the file just created locks no one out.
    if ctx.created.contains(&table) && !create.concurrently {
        return;
    }
    index_concurrency(dialect, ctx, create.concurrently, "PG101", &what, hits);
}

fn alter_table(alter: &AlterTable, dialect: Dialect, ctx: &Context, hits: &mut Vec<Hit>) {
    let table = alter.name.to_string();
    let fresh = ctx.created.contains(&key(&alter.name));
    let ops: Vec<String> = alter
        .operations
        .iter()
        .map(|op| op.to_string().to_uppercase())
        .collect();
    let mut online = (false, false);
    let mut rebuilds = false;
    for op in &ops {
        let words: Vec<&str> = op.split_whitespace().collect();
        let starts = |prefix: &[&str]| words.len() >= prefix.len() && words[..prefix.len()] == *prefix;
        let object = words
            .get(2)
            .or(words.get(1))
            .copied()
            .unwrap_or_default()
            .to_lowercase();
        if starts(&["DROP", "COLUMN"]) || (dialect == Dialect::Mysql && starts(&["DROP"]) && words.len() == 2)
        {
            hits.push((
                "DS102",
                format!(
                    "drops column {} of {table}",
                    words.last().copied().unwrap_or_default().to_lowercase()
                ),
            ));
        } else if starts(&["DROP", "CONSTRAINT"])
            || starts(&["DROP", "FOREIGN", "KEY"])
            || starts(&["DROP", "PRIMARY", "KEY"])
        {
            hits.push(("DS105", format!("{} of {table}", op.to_lowercase())));
        } else if starts(&["ALTER", "COLUMN"]) && (op.contains(" TYPE ") || op.contains(" SET DATA TYPE ")) {
            hits.push(("DS103", format!("changes the type of {table}.{object}")));
            rebuilds = true;
        } else if starts(&["MODIFY"]) || starts(&["CHANGE"]) {
            hits.push((
                "MY102",
                format!("{} of {table}", first_words(op, 3).to_lowercase()),
            ));
            rebuilds = true;
        } else if starts(&["ALTER", "COLUMN"]) && op.ends_with("DROP NOT NULL") {
            hits.push(("DS104", format!("drops NOT NULL of {table}.{object}")));
        } else if starts(&["ALTER", "COLUMN"]) && op.ends_with("SET NOT NULL") && !fresh {
            hits.push(("PG303", format!("sets NOT NULL on {table}.{object}")));
        } else if starts(&["RENAME"]) {
            hits.push(("BC101", format!("{} of {table}", op.to_lowercase())));
        } else if starts(&["DISABLE", "ROW", "LEVEL", "SECURITY"]) {
            hits.push(("DS109", format!("disables row-level security on {table}")));
        } else if (starts(&["SET", "LOGGED"])
            || starts(&["SET", "UNLOGGED"])
            || starts(&["SET", "ACCESS", "METHOD"]))
            && dialect == Dialect::Postgres
            && !fresh
        {
            hits.push(("PG305", format!("{} rewrites {table}", op.to_lowercase())));
        } else if starts(&["ADD"]) && !fresh {
            add(op, &table, dialect, hits, &mut rebuilds);
        } else if starts(&["ALGORITHM"]) {
            online.0 = op.contains("INSTANT") || op.contains("INPLACE");
        } else if starts(&["LOCK"]) {
            online.1 = op.contains("NONE");
        }
    }
    if dialect == Dialect::Mysql
        && !fresh
        && !(online.0 && online.1)
        && (rebuilds || ops.iter().any(|op| op.starts_with("ADD")))
    {
        hits.push((
            "MY101",
            format!("alters {table} without ALGORITHM=INSTANT|INPLACE, LOCK=NONE"),
        ));
    }
}

fn add(op: &str, table: &str, dialect: Dialect, hits: &mut Vec<Hit>, rebuilds: &mut bool) {
    if dialect != Dialect::Postgres {
        return;
    }
    if op.contains("PRIMARY KEY") && !op.contains("USING INDEX") {
        hits.push(("PG104", format!("adds a primary key to {table}")));
    } else if op.contains(" UNIQUE") && !op.contains("USING INDEX") && op.starts_with("ADD CONSTRAINT") {
        hits.push(("PG105", format!("adds a UNIQUE constraint to {table}")));
    } else if (op.contains(" CHECK") || op.contains("FOREIGN KEY") || op.contains(" REFERENCES "))
        && op.starts_with("ADD CONSTRAINT")
        && !op.contains("NOT VALID")
    {
        hits.push(("PG304", format!("adds a constraint to {table} without NOT VALID")));
    } else if op.contains(" GENERATED ALWAYS AS (") && op.contains(" STORED") {
        hits.push(("PG307", format!("adds a stored generated column to {table}")));
        *rebuilds = true;
    } else if op.contains(" NOT NULL")
        && !op.contains(" DEFAULT ")
        && !op.contains(" GENERATED ")
        && !op.starts_with("ADD CONSTRAINT")
    {
        hits.push((
            "DD101",
            format!("adds a NOT NULL column without a default to {table}"),
        ));
    } else if op.contains(" DEFAULT ") && VOLATILE.iter().any(|f| op.contains(f)) {
        hits.push((
            "PG302",
            format!("adds a column with a volatile default to {table}"),
        ));
        *rebuilds = true;
    }
}

/// Defaults PostgreSQL evaluates per row, so adding a column with one rewrites the table.
const VOLATILE: &[&str] = &[
    "RANDOM()",
    "GEN_RANDOM_UUID()",
    "UUID_GENERATE_V4()",
    "CLOCK_TIMESTAMP()",
    "TIMEOFDAY()",
    "NEXTVAL(",
];

/// The first `n` words of `text`.
pub fn first_words(text: &str, n: usize) -> String {
    text.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}
