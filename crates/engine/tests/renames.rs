//! Declared renames on the real servers (issue 37, item 3): a table and a column renamed by a
//! `-- ptah:renamed-from` annotation keep their rows and values, their index and primary key follow
//! the new names without a rebuild, the next plan is empty, and the hints then read as stale
//! notices. A column renamed into another type is refused before anything runs.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, InspectScope, Session, apply, comparable, inspect};
use ptah_schema::{Plan, PlanError, PlanOptions, Schema, Severity};

const LIVE_PG: &str = "CREATE TABLE users (id int PRIMARY KEY, email varchar(200) NOT NULL, name text);
CREATE INDEX users_email_idx ON users (email);
CREATE TABLE orders (id int PRIMARY KEY, user_id int REFERENCES users (id));
INSERT INTO users VALUES (1, 'a@example.org', 'A'), (2, 'b@example.org', 'B'), (3, 'c@example.org', NULL);
INSERT INTO orders VALUES (10, 1), (11, 3)";

const DESIRED_PG: &str = "-- ptah:renamed-from users
CREATE TABLE accounts (
    id int PRIMARY KEY,
    email_address varchar(200) NOT NULL, -- ptah:renamed-from email
    name text
);
CREATE INDEX accounts_email_idx ON accounts (email_address);
CREATE TABLE orders (id int PRIMARY KEY, user_id int REFERENCES accounts (id));";

const LIVE_MYSQL: &str = "CREATE TABLE users (id int PRIMARY KEY, email varchar(200) NOT NULL, name text, KEY users_email_idx (email));
CREATE TABLE orders (id int PRIMARY KEY, user_id int, CONSTRAINT orders_user_fk FOREIGN KEY (user_id) REFERENCES users (id));
INSERT INTO users VALUES (1, 'a@example.org', 'A'), (2, 'b@example.org', 'B'), (3, 'c@example.org', NULL);
INSERT INTO orders VALUES (10, 1), (11, 3)";

const DESIRED_MYSQL: &str = "CREATE TABLE accounts ( -- ptah:renamed-from users
    id int PRIMARY KEY,
    -- ptah:renamed-from email
    email_address varchar(200) NOT NULL,
    name text,
    KEY accounts_email_idx (email_address)
);
CREATE TABLE orders (id int PRIMARY KEY, user_id int, CONSTRAINT orders_user_fk FOREIGN KEY (user_id) REFERENCES accounts (id));";

/// The rows after the rename: every account with its address, every order with its account.
const ROWS_KEPT: &str = "(SELECT count(*) FROM accounts) = 3 \
    AND (SELECT count(*) FROM accounts WHERE email_address LIKE '%@example.org') = 3 \
    AND (SELECT count(*) FROM orders o JOIN accounts a ON a.id = o.user_id) = 2";

/// Fails unless `condition` holds, evaluated by the server itself.
async fn assert_server_says(session: &mut Session, dialect: Dialect, condition: &str) {
    let sql = match dialect {
        Dialect::Postgres => {
            format!("DO $$ BEGIN IF NOT ({condition}) THEN RAISE EXCEPTION 'false'; END IF; END $$")
        }
        Dialect::Mysql => format!(
            "BEGIN NOT ATOMIC IF NOT ({condition}) THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'false'; END IF; END"
        ),
    };
    if let Err(err) = session.batch(&sql).await {
        panic!("the server says no to {condition}: {err}");
    }
}

/// The plan from the database's live schema to `desired`, as `ptah schema plan` computes it.
async fn plan(
    session: &mut Session,
    dialect: Dialect,
    desired: &Schema,
) -> Result<(Plan, Schema), PlanError> {
    let live = inspect(session, &InspectScope::of(desired))
        .await
        .expect("inspect");
    let desired = comparable(session, desired, &live).await.expect("comparable");
    ptah_schema::plan(&desired, &live, dialect, &PlanOptions::default()).map(|p| (p, live))
}

async fn renames_keep_rows(dialect: Dialect, live: &str, desired: &str, expected: &[&str]) {
    let db = Fresh::new(dialect, "renames").await;
    db.run(live).await;
    let desired = ptah_schema::read::sql::parse(dialect, "schema.sql", desired).expect("reads");
    assert_eq!(desired.renames.tables.len(), 1, "{:?}", desired.renames);
    assert_eq!(desired.renames.columns.len(), 1, "{:?}", desired.renames);
    let mut session = db.session().await;

    let (planned, _) = plan(&mut session, dialect, &desired).await.expect("plan");
    let sql: Vec<&str> = planned.statements.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(sql, expected, "renames, not a drop and a create");
    assert!(!planned.destructive, "a rename destroys nothing");
    assert_eq!(planned.highest_severity(), Some(Severity::Warning));

    let options = ApplyOptions {
        scope: InspectScope::of(&desired),
        ..ApplyOptions::default()
    };
    let report = apply(&mut session, &planned, &options).await.expect("apply");
    assert_eq!(report.applied, expected.len());
    assert_server_says(&mut session, dialect, ROWS_KEPT).await;

    // Converged: a fresh plan is empty, and both hints are now stale notices.
    let (again, live) = plan(&mut session, dialect, &desired).await.expect("plan again");
    let again: Vec<&str> = again.statements.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(again, Vec::<&str>::new(), "converged");
    let notices = ptah_schema::diff::ignored_renames(&desired, &live);
    let reasons: Vec<&str> = notices.iter().map(|n| n.reason.as_str()).collect();
    assert_eq!(
        reasons,
        ["already renamed from users", "already renamed from email"]
    );
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn postgresql_renames_a_table_and_a_column_and_keeps_every_row() {
    renames_keep_rows(
        Dialect::Postgres,
        LIVE_PG,
        DESIRED_PG,
        &[
            r#"ALTER TABLE "public"."users" RENAME TO "accounts""#,
            r#"ALTER TABLE "public"."accounts" RENAME COLUMN "email" TO "email_address""#,
            r#"ALTER INDEX "public"."users_email_idx" RENAME TO "accounts_email_idx""#,
            r#"ALTER TABLE "public"."accounts" RENAME CONSTRAINT "users_pkey" TO "accounts_pkey""#,
        ],
    )
    .await;
}

#[tokio::test]
async fn mariadb_renames_a_table_and_a_column_and_keeps_every_row() {
    renames_keep_rows(
        Dialect::Mysql,
        LIVE_MYSQL,
        DESIRED_MYSQL,
        &[
            "ALTER TABLE `users` RENAME TO `accounts`",
            "ALTER TABLE `accounts` RENAME COLUMN `email` TO `email_address`",
            "ALTER TABLE `accounts` RENAME INDEX `users_email_idx` TO `accounts_email_idx`",
        ],
    )
    .await;
}

#[tokio::test]
async fn a_column_renamed_into_another_type_is_refused_and_nothing_runs() {
    let db = Fresh::new(Dialect::Postgres, "renames_type").await;
    db.run(LIVE_PG).await;
    let text = DESIRED_PG.replace("email_address varchar(200)", "email_address text");
    let desired = ptah_schema::read::sql::parse(Dialect::Postgres, "schema.sql", &text).expect("reads");
    let mut session = db.session().await;
    match plan(&mut session, Dialect::Postgres, &desired).await {
        Err(PlanError::RenameChangesType { table, column, from }) => {
            assert_eq!(
                (table.as_str(), column.as_str(), from.as_str()),
                ("public.accounts", "email_address", "email")
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Refused before anything ran: the live table still has its old name and rows.
    assert_server_says(
        &mut session,
        Dialect::Postgres,
        "(SELECT count(*) FROM users) = 3",
    )
    .await;
    session.close().await.expect("close");
    db.drop().await;
}
