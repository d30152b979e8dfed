//! The linter over migration directories in the layouts people write (golang-migrate pairs,
//! goose and dbmate single files), on both dialects: what each rule finds, what it leaves alone,
//! suppression by comment, and the config file.

use std::path::Path;

use ptah_engine::Dialect;
use ptah_migrate::Directory;
use ptah_migrationlint::{Config, Finding, Report, Severity, lint_directory};

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write");
    }
}

fn lint(files: &[(&str, &str)], dialect: Dialect, config: &Config) -> Report {
    let dir = tempfile::tempdir().expect("dir");
    write(dir.path(), files);
    let read = Directory::read(dir.path()).expect("a migration directory");
    lint_directory(&read, dialect, config, None).expect("linted")
}

/// `(code, line)` of every finding of `file`.
fn of(report: &Report, file: &str) -> Vec<(&'static str, usize)> {
    report
        .findings
        .iter()
        .filter(|f| f.file.ends_with(file))
        .map(|f| (f.code, f.line))
        .collect()
}

fn down(name: &str) -> (String, &'static str) {
    (name.replace(".up.", ".down.").to_owned(), "SELECT 1;\n")
}

/// golang-migrate pairs on PostgreSQL, as an application grows.
#[test]
fn postgres_pairs_report_each_hazard_where_it_is() {
    let ups = [
        (
            "000001_create_users.up.sql",
            "CREATE TABLE users (\n  id bigserial PRIMARY KEY,\n  email text,\n  name text,\n  legacy text\n);\nCREATE INDEX idx_users_email ON users (email);\n",
        ),
        (
            "000002_index_name.up.sql",
            "CREATE INDEX idx_users_name ON users (name);\n",
        ),
        (
            "000003_concurrently.up.sql",
            "CREATE INDEX CONCURRENTLY idx_users_lower ON users (lower(email));\n",
        ),
        (
            "000004_concurrently_alone.up.sql",
            "-- +ptah no_transaction\nCREATE INDEX CONCURRENTLY idx_users_name2 ON users (name);\nDROP INDEX CONCURRENTLY idx_users_name;\n",
        ),
        (
            "000005_contract.up.sql",
            "ALTER TABLE users DROP COLUMN legacy;\n-- ptah:nolint DS102\nALTER TABLE users DROP COLUMN name;\n",
        ),
        (
            "000006_constraints.up.sql",
            "ALTER TABLE users ALTER COLUMN email SET NOT NULL;\nALTER TABLE users ADD CONSTRAINT users_email_check CHECK (email <> '');\nALTER TABLE users ADD CONSTRAINT users_email_ok CHECK (email LIKE '%@%') NOT VALID;\nALTER TABLE users ADD CONSTRAINT users_email_key UNIQUE (email);\n",
        ),
        (
            "000007_reshape.up.sql",
            "ALTER TABLE users RENAME COLUMN email TO email_address;\nALTER TABLE users ALTER COLUMN id TYPE numeric;\nTRUNCATE users;\nDROP TABLE users;\n",
        ),
        (
            "000009_more.up.sql",
            "ALTER TABLE accounts DISABLE ROW LEVEL SECURITY;\nALTER TABLE accounts ADD COLUMN region text NOT NULL;\nALTER TABLE accounts ADD COLUMN region2 text NOT NULL DEFAULT 'eu';\nALTER TABLE accounts ADD COLUMN total numeric GENERATED ALWAYS AS (id * 2) STORED;\nCREATE TRIGGER accounts_touch BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION touch();\nALTER TABLE accounts SET UNLOGGED;\n",
        ),
        (
            "000008_wrapped.up.sql",
            "BEGIN;\nALTER TABLE accounts ADD COLUMN token uuid DEFAULT gen_random_uuid();\nCOMMIT;\n",
        ),
    ];
    let mut files: Vec<(String, &str)> = Vec::new();
    for (name, text) in ups {
        files.push((name.to_owned(), text));
        files.push(down(name));
    }
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let report = lint(&files, Dialect::Postgres, &Config::default());

    assert_eq!(
        of(&report, "000001_create_users.up.sql"),
        [],
        "an index on a table the file creates"
    );
    assert_eq!(of(&report, "000002_index_name.up.sql"), [("PG101", 1)]);
    assert_eq!(of(&report, "000003_concurrently.up.sql"), [("PG103", 1)]);
    assert_eq!(of(&report, "000004_concurrently_alone.up.sql"), []);
    assert_eq!(
        of(&report, "000005_contract.up.sql"),
        [("DS102", 1)],
        "the second drop is suppressed"
    );
    assert_eq!(
        of(&report, "000006_constraints.up.sql"),
        [("PG303", 1), ("PG304", 2), ("PG105", 4)],
        "NOT VALID is the lock-safe form"
    );
    assert_eq!(
        of(&report, "000007_reshape.up.sql"),
        [("BC101", 1), ("DS103", 2), ("DS108", 3), ("DS101", 4)]
    );
    assert_eq!(
        of(&report, "000008_wrapped.up.sql"),
        [("TX201", 1), ("PG302", 2), ("TX201", 3)]
    );
    assert_eq!(
        of(&report, "000009_more.up.sql"),
        [
            ("DS109", 1),
            ("DD101", 2),
            ("PG307", 4),
            ("PG306", 5),
            ("PG305", 6)
        ],
        "a NOT NULL column with a default is fine"
    );
    assert_eq!(report.worst(), Some(Severity::Error));
    let ds101 = report.findings.iter().find(|f| f.code == "DS101").expect("DS101");
    assert!(ds101.message.contains("users"), "{ds101:?}");
}

/// goose and dbmate single files on MySQL/MariaDB.
#[test]
fn mysql_single_files_report_copies_and_missing_downs() {
    let files = [
        (
            "20240101120000_add_flag.sql",
            "-- +goose Up\nALTER TABLE orders ADD COLUMN flag TINYINT NOT NULL DEFAULT 0;\n-- +goose Down\nALTER TABLE orders DROP COLUMN flag;\n",
        ),
        (
            "20240102120000_add_flag_online.sql",
            "-- +goose Up\nALTER TABLE orders ADD COLUMN note VARCHAR(20), ALGORITHM=INSTANT, LOCK=NONE;\n",
        ),
        (
            "20240103120000_widen.sql",
            "-- migrate:up\nALTER TABLE orders MODIFY COLUMN note VARCHAR(200);\nCREATE INDEX idx_orders_note ON orders (note);\n\n-- migrate:down\nALTER TABLE orders MODIFY COLUMN note VARCHAR(20);\n",
        ),
    ];
    let report = lint(&files, Dialect::Mysql, &Config::default());
    assert_eq!(of(&report, "20240101120000_add_flag.sql"), [("MY101", 2)]);
    assert_eq!(
        of(&report, "20240102120000_add_flag_online.sql"),
        [("MF101", 0)],
        "ALGORITHM=INSTANT, LOCK=NONE is the online form; the file has no down section"
    );
    assert_eq!(
        of(&report, "20240103120000_widen.sql"),
        [("MY102", 2), ("MY101", 2)],
        "PostgreSQL's index rules do not apply to MySQL"
    );
}

#[test]
fn the_config_disables_changes_severities_and_excludes() {
    let files = [
        ("000001_a.up.sql", "CREATE INDEX i ON t (a);\n"),
        ("000001_a.down.sql", "SELECT 1;\n"),
        ("000002_b.up.sql", "DROP TABLE t;\n"),
        ("000002_b.down.sql", "SELECT 1;\n"),
        ("000003_c.up.sql", "TRUNCATE t;\n"),
        ("000003_c.down.sql", "SELECT 1;\n"),
    ];
    let config = Config::parse("disable: [DS101]\nseverity: {PG101: error}\nexclude: [\"000003_\"]\n")
        .expect("config");
    let report = lint(&files, Dialect::Postgres, &config);
    let got: Vec<(&str, Severity)> = report
        .findings
        .iter()
        .map(|f: &Finding| (f.code, f.severity))
        .collect();
    assert_eq!(
        got,
        [("PG101", Severity::Error)],
        "DS101 disabled, TRUNCATE's file excluded"
    );
    assert!(
        Config::parse("disable: [XX999]\n").is_err(),
        "an unknown code is refused"
    );
    assert!(
        Config::parse("ignore: [DS101]\n").is_err(),
        "an unknown key is refused"
    );
}

#[test]
fn an_empty_migration_and_an_unreadable_statement_are_reported() {
    let files = [
        ("000001_empty.up.sql", "-- nothing yet\n"),
        ("000001_empty.down.sql", "SELECT 1;\n"),
        ("000002_odd.up.sql", "CREATE TABLE t (a int);\nFROBNICATE t;\n"),
        ("000002_odd.down.sql", "SELECT 1;\n"),
    ];
    let report = lint(&files, Dialect::Postgres, &Config::default());
    assert_eq!(of(&report, "000001_empty.up.sql"), [("MF102", 0)]);
    assert_eq!(of(&report, "000002_odd.up.sql"), [("SQL001", 2)]);
}
