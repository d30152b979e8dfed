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

/// These migrations are what their tools' users write: the concurrent index builds run outside a
/// transaction (morph's `nontransactional`, goose's `NO TRANSACTION`, dbmate's
/// `transaction:false`) and the procedure Mattermost creates, calls and drops is its own, so none
/// of them is reported. What is: the triggers Mattermost and the goose example create on tables
/// an earlier file created (writes wait for the trigger's transaction), and, as notices, what the parser cannot read
/// (routine and trigger bodies, a DO block, a prepared statement).
#[test]
fn real_layouts_report_the_trigger_locks_and_notices_of_what_was_not_read() {
    let expected = [
        (
            "golang_migrate",
            "postgres",
            "000005_channel_counts.up.sql",
            9,
            "PG306",
        ),
        (
            "golang_migrate",
            "postgres",
            "000005_channel_counts.up.sql",
            12,
            "SQL001",
        ),
        (
            "golang_migrate",
            "mysql",
            "000004_posts_channel_index.up.sql",
            12,
            "SQL001",
        ),
        (
            "golang_migrate",
            "mysql",
            "000005_channel_counts.up.sql",
            3,
            "SQL001",
        ),
        (
            "golang_migrate",
            "mysql",
            "000005_channel_counts.up.sql",
            28,
            "SQL001",
        ),
        (
            "golang_migrate",
            "mysql",
            "000005_channel_counts.up.sql",
            42,
            "SQL001",
        ),
        (
            "golang_migrate",
            "mysql",
            "000005_channel_counts.up.sql",
            55,
            "SQL001",
        ),
        (
            "goose",
            "postgres",
            "20230102093000_touch_accounts.sql",
            12,
            "PG306",
        ),
        (
            "dbmate",
            "mysql",
            "20240102000000_orders_note_index.sql",
            4,
            "SQL001",
        ),
    ]
    .map(|(tool, dialect, file, line, code)| (tool.to_owned(), dialect, file.to_owned(), line, code));
    assert_eq!(all(), expected);
}
