//! The migrate crate's fixtures: migrations in the layouts golang-migrate (Mattermost's), goose
//! and dbmate users write, on both dialects.

use std::path::Path;

use ptah_engine::Dialect;
use ptah_migrate::Directory;
use ptah_migrationlint::{Config, Report, lint_directory};

fn lint(tool: &str, dialect: Dialect) -> Report {
    let engine = match dialect {
        Dialect::Postgres => "postgres",
        Dialect::Mysql => "mysql",
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../migrate/tests/fixtures")
        .join(tool)
        .join(engine);
    let dir = Directory::read(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    lint_directory(&dir, dialect, &Config::default(), None).expect("linted")
}

/// `(tool, dialect, file, line, code)` of every finding.
fn all() -> Vec<(String, &'static str, String, usize, &'static str)> {
    let mut out = Vec::new();
    for tool in ["golang_migrate", "goose", "dbmate"] {
        for (dialect, name) in [(Dialect::Postgres, "postgres"), (Dialect::Mysql, "mysql")] {
            for f in lint(tool, dialect).findings {
                let file = f.file.rsplit('/').next().unwrap_or_default().to_owned();
                out.push((tool.to_owned(), name, file, f.line, f.code));
            }
        }
    }
    out
}

/// These migrations are safe as written: their concurrent index builds run outside a transaction
/// (morph's `nontransactional`, goose's `NO TRANSACTION`, dbmate's `transaction:false`), the
/// procedure Mattermost creates, calls and drops is its own. What remains is what the parser
/// cannot read (routine and trigger bodies, a DO block, a prepared statement), said as notices.
#[test]
fn real_layouts_that_are_safe_raise_only_notices_of_what_was_not_read() {
    let found = all();
    let notices: Vec<(&str, &str, &str, usize)> = found
        .iter()
        .map(|(tool, dialect, file, line, code)| {
            assert_eq!(*code, "SQL001", "{tool} {dialect} {file}:{line}");
            (tool.as_str(), *dialect, file.as_str(), *line)
        })
        .collect();
    assert_eq!(
        notices,
        [
            ("golang_migrate", "postgres", "000005_channel_counts.up.sql", 12),
            ("golang_migrate", "mysql", "000004_posts_channel_index.up.sql", 12),
            ("golang_migrate", "mysql", "000005_channel_counts.up.sql", 3),
            ("golang_migrate", "mysql", "000005_channel_counts.up.sql", 28),
            ("golang_migrate", "mysql", "000005_channel_counts.up.sql", 42),
            ("golang_migrate", "mysql", "000005_channel_counts.up.sql", 55),
            ("dbmate", "mysql", "20240102000000_orders_note_index.sql", 4),
        ]
    );
}
