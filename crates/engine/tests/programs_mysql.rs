//! MySQL/MariaDB views and triggers on a real MariaDB 10.11: inspected in the canonical forms the
//! dump reader produces (so the SQL that declared them plans nothing), carried to an empty
//! database by a plan, and a view rebuilt around a column it reads changing type.
//!
//! The views are written here as the server prints them (``select `t`.`a` AS `a` …``): on MySQL
//! a definition is compared as text, and DDL cannot be tried in a rolled-back transaction to learn
//! the server's form of a hand-written one.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, InspectScope, apply, inspect, mysql_flavor, verify};
use ptah_schema::{DataType, PlanOptions, QualifiedName, Schema};

const MY: Dialect = Dialect::Mysql;

/// Tables, a view, a view over it, and two triggers (one with a multi-statement body).
const SETUP: &str = "CREATE TABLE customers (id int NOT NULL PRIMARY KEY, email varchar(100) NOT NULL, \
status enum('active','closed') NOT NULL DEFAULT 'active');
CREATE TABLE orders (id int NOT NULL PRIMARY KEY, customer_id int NOT NULL, total decimal(10,2) NOT NULL, note varchar(50));
CREATE TABLE audit (id int NOT NULL AUTO_INCREMENT PRIMARY KEY, msg varchar(200) NOT NULL);
CREATE VIEW `active_customers` AS select `customers`.`id` AS `id`,`customers`.`email` AS `email` from `customers` where `customers`.`status` = 'active';
CREATE VIEW `customer_totals` AS select `c`.`id` AS `id`,`c`.`email` AS `email`,sum(`o`.`total`) AS `spent`,count(0) AS `n` from (`active_customers` `c` join `orders` `o` on(`o`.`customer_id` = `c`.`id`)) group by `c`.`id`,`c`.`email`;
CREATE TRIGGER orders_note BEFORE INSERT ON orders FOR EACH ROW SET NEW.note = COALESCE(NEW.note, 'none');
";

/// A trigger whose body holds `;`: one statement to the server, a `DELIMITER` block in a script.
const AUDIT: &str = "CREATE TRIGGER orders_audit AFTER UPDATE ON orders FOR EACH ROW BEGIN INSERT INTO audit (msg) \
VALUES (CONCAT('order ', NEW.id)); INSERT INTO audit (msg) VALUES ('x;y'); END";

async fn set_up(db: &Fresh) {
    db.run(SETUP).await;
    let mut session = db.session().await;
    session.batch(AUDIT).await.expect("trigger");
    session.close().await.expect("close");
}

fn q(name: &str) -> QualifiedName {
    QualifiedName::new("", name)
}

async fn options(session: &mut ptah_engine::Session) -> PlanOptions {
    PlanOptions {
        mysql_flavor: mysql_flavor(session).await.expect("flavor").expect("mysql"),
        ..PlanOptions::default()
    }
}

#[tokio::test]
async fn serial_db_views_and_triggers_inspect_as_the_sql_that_declared_them() {
    let db = Fresh::new(MY, "programs_my_inspect").await;
    set_up(&db).await;
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect");
    assert_eq!(
        live.views[&q("customer_totals")].definition,
        "select `c`.`id` AS `id`,`c`.`email` AS `email`,sum(`o`.`total`) AS `spent`,count(0) AS `n` \
         from (`active_customers` `c` join `orders` `o` on(`o`.`customer_id` = `c`.`id`)) group by `c`.`id`,`c`.`email`",
        "the database's own qualifier is gone, as in SHOW CREATE VIEW"
    );
    assert_eq!(
        live.triggers[&q("orders.orders_note")].definition,
        "CREATE TRIGGER `orders_note` BEFORE INSERT ON `orders` FOR EACH ROW SET NEW.note = COALESCE(NEW.note, 'none')"
    );
    assert_eq!(live.triggers.len(), 2);

    let declared = ptah_schema::read::sql::parse(
        MY,
        "setup.sql",
        &format!("{SETUP}DELIMITER ;;\n{AUDIT};;\nDELIMITER ;\n"),
    )
    .expect("the setup reads");
    assert_eq!(declared.views, live.views);
    assert_eq!(declared.triggers, live.triggers);
    let opts = options(&mut session).await;
    let planned = ptah_schema::plan(&declared, &live, MY, &opts).expect("plan");
    let sql: Vec<&str> = planned.statements.iter().map(|s| s.sql.as_str()).collect();
    assert!(planned.is_empty(), "{sql:#?}");
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn serial_db_inspected_views_and_triggers_apply_to_an_empty_database_and_replan_empty() {
    let source = Fresh::new(MY, "programs_my_source").await;
    set_up(&source).await;
    let mut session = source.session().await;
    let desired = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect source");
    session.close().await.expect("close");

    let target = Fresh::new(MY, "programs_my_target").await;
    let mut session = target.session().await;
    let opts = options(&mut session).await;
    converge(&mut session, &desired, &opts).await;
    let copied = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect target");
    assert_eq!(copied.views, desired.views);
    assert_eq!(copied.triggers, desired.triggers);
    // The triggers run: a multi-statement body went over as one statement.
    session
        .batch("INSERT INTO orders (id, customer_id, total) VALUES (1, 1, 5)")
        .await
        .expect("insert");
    session
        .batch("UPDATE orders SET total = 6")
        .await
        .expect("update");
    session.close().await.expect("close");
    target.drop().await;
    source.drop().await;
}

#[tokio::test]
async fn serial_db_a_view_is_rebuilt_when_a_column_it_reads_changes_type() {
    let db = Fresh::new(MY, "programs_my_retype").await;
    set_up(&db).await;
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect");
    let mut desired = live.clone();
    let customers = desired.tables.get_mut(&q("customers")).expect("customers");
    let email = customers
        .columns
        .iter_mut()
        .find(|c| c.name == "email")
        .expect("email");
    email.data_type = DataType::Varchar(Some(200));
    let opts = options(&mut session).await;
    let planned = ptah_schema::plan(&desired, &live, MY, &opts).expect("plan");
    let sql: Vec<&str> = planned.statements.iter().map(|s| s.sql.as_str()).collect();
    let at = |needle: &str| {
        sql.iter()
            .position(|s| s.contains(needle))
            .unwrap_or_else(|| panic!("{needle} in {sql:#?}"))
    };
    // The view over the view goes first and comes back last.
    assert!(
        at("DROP VIEW `customer_totals`") < at("DROP VIEW `active_customers`"),
        "{sql:#?}"
    );
    assert!(
        at("DROP VIEW `active_customers`") < at("ALTER TABLE `customers`"),
        "{sql:#?}"
    );
    assert!(
        at("ALTER TABLE `customers`") < at("CREATE VIEW `active_customers`"),
        "{sql:#?}"
    );
    assert!(
        at("CREATE VIEW `active_customers`") < at("CREATE VIEW `customer_totals`"),
        "{sql:#?}"
    );
    assert!(!sql.iter().any(|s| s.contains("TRIGGER")), "{sql:#?}");
    converge(&mut session, &desired, &opts).await;
    session.close().await.expect("close");
    db.drop().await;
}

/// Plans `desired` against the session's database, applies it, and requires an empty re-plan.
async fn converge(session: &mut ptah_engine::Session, desired: &Schema, opts: &PlanOptions) {
    let scope = InspectScope::of(desired);
    let actual = inspect(session, &scope).await.expect("inspect");
    let planned = ptah_schema::plan(desired, &actual, MY, opts).expect("plan");
    assert!(!planned.is_empty());
    let apply_opts = ApplyOptions {
        scope: scope.clone(),
        ..ApplyOptions::default()
    };
    let report = apply(session, &planned, &apply_opts).await.expect("apply");
    assert_eq!(report.applied, planned.statements.len());
    verify(session, desired, &scope, opts).await.expect("converged");
}
