//! MySQL and MariaDB plans for hand-built before/after pairs: exact SQL, severity and order.

use std::collections::BTreeMap;

use Severity::{Destructive as D, Safe as S, Warning as W};
use ptah_schema::{
    CheckConstraint, Column, DataType, DefaultValue, Dialect, ForeignKey, Index, IndexPart, IndexTarget,
    Literal, MysqlFlavor, PlanOptions, PrimaryKey, QualifiedName, ReferenceRows, ReferentialAction, Schema,
    Severity, Table, UniqueConstraint, plan,
};

fn q(name: &str) -> QualifiedName {
    QualifiedName::new("", name)
}

const INT: DataType = DataType::Integer {
    bits: 32,
    unsigned: false,
};

fn col(name: &str, data_type: DataType, nullable: bool) -> Column {
    Column {
        name: name.into(),
        data_type,
        nullable,
        default: None,
        identity: None,
        identity_options: None,
        auto_increment: false,
        comment: None,
        charset: None,
        collation: None,
        generated: None,
    }
}

fn users() -> Table {
    let mut t = Table::new(q("users"));
    let mut id = col("id", INT, false);
    id.auto_increment = true;
    let mut status = col(
        "status",
        DataType::InlineEnum(vec!["on".into(), "off".into()]),
        false,
    );
    status.default = Some(DefaultValue::Literal(Literal::String("on".into())));
    t.columns = vec![id, col("email", DataType::Varchar(Some(255)), false), status];
    t.primary_key = Some(PrimaryKey {
        name: "PRIMARY".into(),
        columns: vec!["id".into()],
    });
    t
}

fn orders() -> Table {
    let mut t = Table::new(q("orders"));
    t.columns = vec![col("id", INT, false), col("user_id", INT, true)];
    t.primary_key = Some(PrimaryKey {
        name: "PRIMARY".into(),
        columns: vec!["id".into()],
    });
    let fk = ForeignKey {
        name: "orders_user".into(),
        columns: vec!["user_id".into()],
        referenced_table: q("users"),
        referenced_columns: vec!["id".into()],
        on_delete: ReferentialAction::SetNull,
        on_update: ReferentialAction::NoAction,
        options: ptah_schema::ForeignKeyOptions::default(),
    };
    t.foreign_keys.insert(fk.name.clone(), fk);
    t
}

fn base() -> Schema {
    let mut s = Schema::default();
    for t in [users(), orders()] {
        s.tables.insert(t.name.clone(), t);
    }
    s
}

fn with(table: &str, change: impl FnOnce(&mut Table)) -> Schema {
    let mut s = base();
    if let Some(t) = s.tables.get_mut(&q(table)) {
        change(t);
    }
    s
}

fn assert_plan_with(flavor: MysqlFlavor, before: &Schema, after: &Schema, expected: &[(&str, Severity)]) {
    let options = PlanOptions {
        mysql_flavor: flavor,
        ..PlanOptions::default()
    };
    let p = plan(after, before, Dialect::Mysql, &options).expect("plan");
    let got: Vec<(&str, Severity)> = p
        .statements
        .iter()
        .map(|s| (s.sql.as_str(), s.severity))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(p.destructive, expected.iter().any(|(_, s)| *s == D));
}

fn assert_plan(before: &Schema, after: &Schema, expected: &[(&str, Severity)]) {
    assert_plan_with(MysqlFlavor::Mysql, before, after, expected);
}

#[test]
fn create_tables_with_innodb_inline_enum_and_foreign_keys_after() {
    let mut after = base();
    if let Some(u) = after.tables.get_mut(&q("users")) {
        u.comment = Some("it's people".into());
        u.columns[1].comment = Some("a\\b".into());
        u.uniques.insert(
            "users_email".into(),
            UniqueConstraint {
                name: "users_email".into(),
                columns: vec!["email".into()],
            },
        );
        let mut i = Index {
            name: "users_email_prefix".into(),
            unique: false,
            parts: Vec::new(),
            predicate: None,
            method: None,
            include: Vec::new(),
            nulls_not_distinct: false,
            storage: Vec::new(),
        };
        i.parts.push(IndexPart {
            target: IndexTarget::Column("email".into()),
            descending: true,
            prefix_length: Some(10),
            opclass: None,
            nulls_first: None,
        });
        u.indexes.insert(i.name.clone(), i);
    }
    assert_plan(
        &Schema::default(),
        &after,
        &[
            (
                "CREATE TABLE `users` (`id` int NOT NULL AUTO_INCREMENT, `email` varchar(255) NOT NULL COMMENT 'a\\\\b', `status` enum('on','off') NOT NULL DEFAULT 'on', PRIMARY KEY (`id`), CONSTRAINT `users_email` UNIQUE (`email`)) ENGINE=InnoDB COMMENT='it''s people'",
                S,
            ),
            (
                "CREATE TABLE `orders` (`id` int NOT NULL, `user_id` int NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB",
                S,
            ),
            (
                "CREATE INDEX `users_email_prefix` ON `users` (`email`(10) DESC)",
                S,
            ),
            (
                "ALTER TABLE `orders` ADD CONSTRAINT `orders_user` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE SET NULL ON UPDATE NO ACTION",
                W,
            ),
        ],
    );
}

#[test]
fn column_changes_use_modify_column_with_the_full_definition() {
    type Case = (&'static str, fn(&mut Table), Vec<(&'static str, Severity)>);
    let cases: Vec<Case> = vec![
        (
            "add nullable",
            |t| t.columns.push(col("nick", DataType::Varchar(Some(20)), true)),
            vec![(
                "ALTER TABLE `users` ADD COLUMN `nick` varchar(20) NULL, ALGORITHM=INSTANT",
                S,
            )],
        ),
        (
            "add not null",
            |t| {
                t.columns.push(col(
                    "age",
                    DataType::Integer {
                        bits: 8,
                        unsigned: true,
                    },
                    false,
                ))
            },
            vec![(
                "ALTER TABLE `users` ADD COLUMN `age` tinyint unsigned NOT NULL, ALGORITHM=INSTANT",
                W,
            )],
        ),
        (
            "drop column",
            |t| t.columns.retain(|c| c.name != "email"),
            vec![("ALTER TABLE `users` DROP COLUMN `email`", D)],
        ),
        (
            "widen varchar",
            |t| t.columns[1].data_type = DataType::Varchar(Some(300)),
            vec![(
                "ALTER TABLE `users` MODIFY COLUMN `email` varchar(300) NOT NULL",
                W,
            )],
        ),
        (
            "narrow varchar",
            |t| t.columns[1].data_type = DataType::Varchar(Some(50)),
            vec![(
                "ALTER TABLE `users` MODIFY COLUMN `email` varchar(50) NOT NULL",
                D,
            )],
        ),
        (
            "inline enum gains a value",
            |t| t.columns[2].data_type = DataType::InlineEnum(vec!["on".into(), "off".into(), "gone".into()]),
            vec![(
                "ALTER TABLE `users` MODIFY COLUMN `status` enum('on','off','gone') NOT NULL DEFAULT 'on'",
                W,
            )],
        ),
        (
            "inline enum loses a value",
            |t| t.columns[2].data_type = DataType::InlineEnum(vec!["on".into()]),
            vec![(
                "ALTER TABLE `users` MODIFY COLUMN `status` enum('on') NOT NULL DEFAULT 'on'",
                D,
            )],
        ),
        (
            "drop not null",
            |t| t.columns[1].nullable = true,
            vec![("ALTER TABLE `users` MODIFY COLUMN `email` varchar(255) NULL", D)],
        ),
        (
            "comment only is still a rewrite",
            |t| t.columns[1].comment = Some("mail".into()),
            vec![(
                "ALTER TABLE `users` MODIFY COLUMN `email` varchar(255) NOT NULL COMMENT 'mail'",
                W,
            )],
        ),
        (
            "expression default",
            |t| t.columns[1].default = Some(DefaultValue::Expression("uuid()".into())),
            vec![(
                "ALTER TABLE `users` MODIFY COLUMN `email` varchar(255) NOT NULL DEFAULT (uuid())",
                W,
            )],
        ),
        (
            "auto_increment dropped",
            |t| t.columns[0].auto_increment = false,
            vec![("ALTER TABLE `users` MODIFY COLUMN `id` int NOT NULL", W)],
        ),
        (
            "table comment",
            |t| t.comment = Some("x".into()),
            vec![("ALTER TABLE `users` COMMENT='x'", S)],
        ),
    ];
    for (what, change, expected) in cases {
        let p = plan(
            &with("users", change),
            &base(),
            Dialect::Mysql,
            &PlanOptions::default(),
        )
        .expect(what);
        let got: Vec<(&str, Severity)> = p
            .statements
            .iter()
            .map(|s| (s.sql.as_str(), s.severity))
            .collect();
        assert_eq!(got, expected, "{what}");
        assert!(p.statements.iter().all(|s| !s.reason.is_empty()), "{what}");
    }
}

#[test]
fn indexes_and_constraints_drop_with_mysql_clauses() {
    let after = with("users", |u| {
        u.uniques.insert(
            "users_email".into(),
            UniqueConstraint {
                name: "users_email".into(),
                columns: vec!["email".into()],
            },
        );
        u.checks.insert(
            "users_email_len".into(),
            CheckConstraint {
                name: "users_email_len".into(),
                expression: "char_length(`email`) > 3".into(),
            },
        );
        let mut i = Index {
            name: "users_lower".into(),
            unique: false,
            parts: Vec::new(),
            predicate: None,
            method: Some("btree".into()),
            include: Vec::new(),
            nulls_not_distinct: false,
            storage: Vec::new(),
        };
        i.parts.push(IndexPart {
            target: IndexTarget::Expression("lower(`email`)".into()),
            descending: false,
            prefix_length: None,
            opclass: None,
            nulls_first: None,
        });
        u.indexes.insert(i.name.clone(), i);
    });
    assert_plan(
        &base(),
        &after,
        &[
            (
                "CREATE INDEX `users_lower` ON `users` ((lower(`email`))) USING BTREE ALGORITHM=INPLACE LOCK=NONE",
                S,
            ),
            (
                "ALTER TABLE `users` ADD CONSTRAINT `users_email` UNIQUE (`email`)",
                W,
            ),
            (
                "ALTER TABLE `users` ADD CONSTRAINT `users_email_len` CHECK (char_length(`email`) > 3)",
                W,
            ),
        ],
    );
    let removal = [
        ("ALTER TABLE `orders` DROP FOREIGN KEY `orders_user`", D),
        ("ALTER TABLE `users` DROP INDEX `users_email`", D),
        ("ALTER TABLE `users` DROP CHECK `users_email_len`", D),
        (
            "ALTER TABLE `users` DROP INDEX `users_lower`, ALGORITHM=INPLACE, LOCK=NONE",
            D,
        ),
    ];
    let no_fk = |s: &Schema| {
        let mut s = s.clone();
        if let Some(o) = s.tables.get_mut(&q("orders")) {
            o.foreign_keys.clear();
        }
        s
    };
    assert_plan(&after, &no_fk(&base()), &removal);
    // MariaDB spells the check drop as a constraint drop.
    let mut mariadb = removal.to_vec();
    mariadb[2] = ("ALTER TABLE `users` DROP CONSTRAINT `users_email_len`", D);
    // InnoDB keeps a foreign key's implicit index after the key is dropped; only MariaDB can drop
    // it conditionally in the same statement (MySQL 8 has no DROP INDEX IF EXISTS).
    mariadb[0] = (
        "ALTER TABLE `orders` DROP FOREIGN KEY `orders_user`, DROP INDEX IF EXISTS `orders_user`",
        D,
    );
    assert_plan_with(MysqlFlavor::Mariadb, &after, &no_fk(&base()), &mariadb);
    // A primary key change: DROP PRIMARY KEY then ADD PRIMARY KEY.
    let pk = with("orders", |o| {
        o.primary_key = Some(PrimaryKey {
            name: "PRIMARY".into(),
            columns: vec!["id".into(), "user_id".into()],
        });
    });
    assert_plan(
        &base(),
        &pk,
        &[
            ("ALTER TABLE `orders` DROP PRIMARY KEY", D),
            ("ALTER TABLE `orders` ADD PRIMARY KEY (`id`, `user_id`)", W),
        ],
    );
}

#[test]
fn reference_rows_insert_parents_first_and_delete_children_first() {
    let row = |pairs: &[(&str, Literal)]| -> BTreeMap<String, Literal> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    };
    let n = |x: &str| Literal::Number(x.into());
    let mut before = base();
    let mut after = base();
    if let Some(u) = after.tables.get_mut(&q("users")) {
        u.rows = Some(ReferenceRows {
            key: vec!["id".into()],
            rows: vec![row(&[
                ("id", n("1")),
                ("email", Literal::String("o'neil".into())),
            ])],
        });
    }
    if let Some(o) = after.tables.get_mut(&q("orders")) {
        o.rows = Some(ReferenceRows {
            key: vec!["id".into()],
            rows: vec![row(&[("id", n("7")), ("user_id", n("1"))])],
        });
    }
    assert_plan(
        &before,
        &after,
        &[
            ("INSERT INTO `users` (`email`, `id`) VALUES ('o''neil', 1)", S),
            ("INSERT INTO `orders` (`id`, `user_id`) VALUES (7, 1)", S),
        ],
    );
    // The other way: rows that are no longer declared are deleted, children first.
    before = after.clone();
    for t in after.tables.values_mut() {
        if let Some(r) = t.rows.as_mut() {
            r.rows.clear();
        }
    }
    assert_plan(
        &before,
        &after,
        &[
            ("DELETE FROM `orders` WHERE `id` = 7", D),
            ("DELETE FROM `users` WHERE `id` = 1", D),
        ],
    );
}
