//! The benchmark's schema: N business tables shaped like `bench-baseline.md` §2 (identity or
//! auto-increment keys, varchar/numeric/jsonb/timestamptz columns with defaults, enums, foreign keys
//! to earlier tables, named CHECKs, unique/DESC/partial/expression/GIN or prefix indexes, comments)
//! plus five fixed audit tables, built directly as a [`Schema`] model from one seeded draw, so the
//! PostgreSQL and MariaDB schemas describe the same tables.
//!
//! Defaults and expressions go through `ptah_schema::normalize`, exactly as the readers would turn
//! the same DDL text into a model.

use std::collections::BTreeSet;

use ptah_schema::{
    CheckConstraint, Column, DataType, Dialect, EnumType, ForeignKey, Identity, Index, IndexPart,
    IndexTarget, PrimaryKey, QualifiedName, ReferentialAction, Schema, Table, UniqueConstraint, normalize,
};

/// A small deterministic generator (SplitMix64): the same seed gives the same schema everywhere.
pub struct Rng(u64);

impl Rng {
    /// A generator started at `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        // The modulo bias is irrelevant for a schema generator.
        (self.next() % n as u64) as usize
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// `k` distinct elements in random order (partial Fisher–Yates).
    pub fn sample<T: Copy>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut pool = items.to_vec();
        let k = k.min(pool.len());
        for i in 0..k {
            let j = i + self.below(pool.len() - i);
            pool.swap(i, j);
        }
        pool.truncate(k);
        pool
    }
}

const NOUNS: [&str; 20] = [
    "account",
    "order",
    "invoice",
    "customer",
    "product",
    "shipment",
    "payment",
    "ledger",
    "session",
    "device",
    "contract",
    "ticket",
    "asset",
    "vendor",
    "campaign",
    "subscription",
    "warehouse",
    "employee",
    "project",
    "report",
];
const STATUS: [&str; 4] = ["active", "inactive", "pending", "archived"];
const PRIORITY: [&str; 4] = ["low", "medium", "high", "critical"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extra {
    UpdatedAt,
    IsActive,
    Quantity,
    Code,
    Description,
    Ratio,
    BirthDate,
    ExternalId,
    Status,
    Priority,
    Payload,
    DeletedAt,
    Tags,
}

const EXTRAS: [Extra; 13] = [
    Extra::UpdatedAt,
    Extra::IsActive,
    Extra::Quantity,
    Extra::Code,
    Extra::Description,
    Extra::Ratio,
    Extra::BirthDate,
    Extra::ExternalId,
    Extra::Status,
    Extra::Priority,
    Extra::Payload,
    Extra::DeletedAt,
    Extra::Tags,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ix {
    NameUnique,
    CreatedAtDesc,
    ForeignKey,
    Partial,
    LowerName,
    StatusCreated,
    DescriptionPrefix,
    CodePrefix,
    GinData,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CheckOn {
    Amount,
    Quantity,
    Name,
    Ratio,
}

/// One business table, engine-neutral.
struct Spec {
    i: usize,
    name: String,
    identity_always: bool,
    name_len: u32,
    numeric: (u32, u32),
    amount_default: bool,
    /// The 0-based index of an earlier table and the ON DELETE action.
    fk: Option<(usize, ReferentialAction)>,
    extras: Vec<Extra>,
    code_len: u32,
    check: Option<CheckOn>,
    indexes: Vec<Ix>,
    comment: bool,
}

fn specs(n: usize, seed: u64) -> Vec<Spec> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(n);
    for i in 1..=n {
        let name = format!("{}_{i:05}", rng.pick(&NOUNS));
        let identity_always = rng.chance(0.2);
        let name_len = rng.pick(&[32, 64, 128, 255]);
        let numeric = rng.pick(&[(10, 2), (12, 2), (18, 4), (14, 6)]);
        let amount_default = rng.chance(0.5);
        let fk = (i > 1 && rng.chance(0.5)).then(|| {
            let action = rng.pick(&[
                ReferentialAction::NoAction,
                ReferentialAction::Cascade,
                ReferentialAction::SetNull,
                ReferentialAction::Restrict,
            ]);
            (rng.below(i - 1), action)
        });
        let core = 5 + usize::from(fk.is_some());
        let total = 8 + rng.below(5);
        let extras = rng.sample(&EXTRAS, total.saturating_sub(core));
        let code_len = rng.pick(&[8, 16, 32]);
        let check = rng.chance(0.35).then(|| {
            let mut options = vec![CheckOn::Amount, CheckOn::Name];
            if extras.contains(&Extra::Quantity) {
                options.push(CheckOn::Quantity);
            }
            if extras.contains(&Extra::Ratio) {
                options.push(CheckOn::Ratio);
            }
            rng.pick(&options)
        });
        let mut options = vec![Ix::NameUnique, Ix::CreatedAtDesc, Ix::LowerName, Ix::GinData];
        let conditional = [
            (fk.is_some(), Ix::ForeignKey),
            (extras.contains(&Extra::DeletedAt), Ix::Partial),
            (extras.contains(&Extra::Status), Ix::StatusCreated),
            (extras.contains(&Extra::Description), Ix::DescriptionPrefix),
            (extras.contains(&Extra::Code), Ix::CodePrefix),
        ];
        options.extend(conditional.iter().filter(|(on, _)| *on).map(|(_, ix)| *ix));
        let k = 1 + rng.below(3);
        let indexes = rng.sample(&options, k);
        let comment = rng.chance(0.2);
        out.push(Spec {
            i,
            name,
            identity_always,
            name_len,
            numeric,
            amount_default,
            fk,
            extras,
            code_len,
            check,
            indexes,
            comment,
        });
    }
    out
}

/// The benchmark schema of `n` business tables (plus five audit tables) for `dialect`.
pub fn schema(dialect: Dialect, n: usize, seed: u64) -> Schema {
    let specs = specs(n, seed);
    let mut b = Builder {
        dialect,
        schema: Schema::default(),
    };
    if dialect == Dialect::Postgres {
        b.schema.namespaces = BTreeSet::from(["app".to_owned(), "audit".to_owned()]);
        b.named_enum("app", "status_t", &STATUS);
        b.named_enum("app", "priority_t", &PRIORITY);
        b.named_enum("audit", "action_t", &["insert", "update", "delete"]);
    }
    for spec in &specs {
        let table = b.business_table(spec, &specs);
        b.schema.tables.insert(table.name.clone(), table);
    }
    b.audit_tables(&specs[0].name);
    if dialect == Dialect::Mysql {
        // As the readers and the inspector canonicalise them: NO ACTION is RESTRICT on MySQL.
        for fk in b
            .schema
            .tables
            .values_mut()
            .flat_map(|t| t.foreign_keys.values_mut())
        {
            fk.on_delete = normalize::mysql_action(fk.on_delete);
            fk.on_update = normalize::mysql_action(fk.on_update);
        }
    }
    super::programs::add(&mut b.schema, dialect);
    b.schema
}

struct Builder {
    dialect: Dialect,
    schema: Schema,
}

fn column(name: &str, data_type: DataType, nullable: bool) -> Column {
    Column {
        name: name.to_owned(),
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

fn int(bits: u8) -> DataType {
    DataType::Integer {
        bits,
        unsigned: false,
    }
}

fn part(column: &str) -> IndexPart {
    IndexPart {
        target: IndexTarget::Column(column.to_owned()),
        descending: false,
        prefix_length: None,
        opclass: None,
        nulls_first: None,
    }
}

impl Builder {
    fn pg(&self) -> bool {
        self.dialect == Dialect::Postgres
    }

    /// A table name in `pg_schema` on PostgreSQL; on MySQL, the URL's database with the schema as a
    /// prefix (other than `app`), since one database is one namespace there.
    fn table_name(&self, pg_schema: &str, name: &str) -> QualifiedName {
        match (self.dialect, pg_schema) {
            (Dialect::Postgres, _) => QualifiedName::new(pg_schema, name),
            (Dialect::Mysql, "app") => QualifiedName::new("", name),
            (Dialect::Mysql, _) => QualifiedName::new("", format!("{pg_schema}_{name}")),
        }
    }

    fn named_enum(&mut self, schema: &str, name: &str, values: &[&str]) {
        let name = QualifiedName::new(schema, name);
        let values = values.iter().map(|v| (*v).to_owned()).collect();
        self.schema.enums.insert(name.clone(), EnumType { name, values });
    }

    fn enum_type(&self, pg_schema: &str, pg_name: &str, values: &[&str]) -> DataType {
        if self.pg() {
            DataType::Enum(QualifiedName::new(pg_schema, pg_name))
        } else {
            DataType::InlineEnum(values.iter().map(|v| (*v).to_owned()).collect())
        }
    }

    fn with_default(&self, mut c: Column, text: &str) -> Column {
        c.default = Some(normalize::default_value(self.dialect, text));
        c
    }

    fn expression(&self, text: &str) -> String {
        normalize::expression(self.dialect, text)
    }

    /// `bigint` identity on PostgreSQL, `bigint AUTO_INCREMENT` on MySQL.
    fn key_column(&self, name: &str, bits: u8, always: bool) -> Column {
        let mut c = column(name, int(bits), false);
        if self.pg() {
            c.identity = Some(if always {
                Identity::Always
            } else {
                Identity::ByDefault
            });
        } else {
            c.auto_increment = true;
        }
        c
    }

    fn timestamp(&self, pg_tz: bool) -> DataType {
        if self.pg() {
            DataType::Timestamp {
                precision: None,
                with_time_zone: pg_tz,
                mysql_datetime: false,
            }
        } else {
            DataType::Timestamp {
                precision: Some(6),
                with_time_zone: false,
                mysql_datetime: !pg_tz,
            }
        }
    }

    /// `timestamptz NOT NULL DEFAULT now()` / `TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)`.
    fn created_at(&self, name: &str) -> Column {
        let c = column(name, self.timestamp(true), false);
        if self.pg() {
            self.with_default(c, "now()")
        } else {
            self.with_default(c, "CURRENT_TIMESTAMP(6)")
        }
    }

    /// A nullable point in time (`timestamptz` / `DATETIME(6)`).
    fn moment(&self, name: &str) -> Column {
        let data_type = if self.pg() {
            self.timestamp(true)
        } else {
            self.timestamp(false)
        };
        column(name, data_type, true)
    }

    fn json(&self) -> DataType {
        if self.pg() {
            DataType::Jsonb
        } else {
            DataType::Json
        }
    }

    fn primary_key(&self, table: &QualifiedName, columns: &[&str]) -> PrimaryKey {
        PrimaryKey {
            name: if self.pg() {
                format!("{}_pkey", table.name)
            } else {
                "PRIMARY".to_owned()
            },
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    fn extra(&self, extra: Extra, code_len: u32) -> Column {
        match extra {
            Extra::UpdatedAt => self.moment("updated_at"),
            Extra::IsActive => self.with_default(column("is_active", DataType::Boolean, false), "true"),
            Extra::Quantity => self.with_default(column("quantity", int(32), false), "0"),
            Extra::Code => column("code", DataType::Varchar(Some(code_len)), true),
            Extra::Description => column("description", DataType::Text, true),
            Extra::Ratio => column("ratio", DataType::Float64, true),
            Extra::BirthDate => column("birth_date", DataType::Date, true),
            Extra::ExternalId if self.pg() => column("external_id", DataType::Uuid, true),
            Extra::ExternalId => column("external_id", DataType::Char(Some(36)), true),
            Extra::Status => {
                let c = column("status", self.enum_type("app", "status_t", &STATUS), false);
                self.with_default(c, "'pending'")
            }
            Extra::Priority => column("priority", self.enum_type("app", "priority_t", &PRIORITY), true),
            Extra::Payload => column("payload", DataType::Binary, true),
            Extra::DeletedAt => self.moment("deleted_at"),
            Extra::Tags if self.pg() => self.with_default(
                column("tags", DataType::Array(Box::new(DataType::Text)), false),
                "'{}'::text[]",
            ),
            Extra::Tags => column("tags", DataType::Json, true),
        }
    }

    fn business_table(&self, spec: &Spec, all: &[Spec]) -> Table {
        let name = self.table_name("app", &spec.name);
        let mut t = Table::new(name.clone());
        t.columns.push(self.key_column("id", 64, spec.identity_always));
        t.columns
            .push(column("name", DataType::Varchar(Some(spec.name_len)), false));
        let amount = DataType::Decimal {
            precision: Some(spec.numeric.0),
            scale: Some(spec.numeric.1),
        };
        t.columns.push(if spec.amount_default {
            self.with_default(column("amount", amount, false), "0")
        } else {
            column("amount", amount, true)
        });
        t.columns.push(column("data", self.json(), true));
        if spec.fk.is_some() {
            t.columns.push(column("parent_id", int(64), true));
        }
        for extra in &spec.extras {
            t.columns.push(self.extra(*extra, spec.code_len));
        }
        t.columns.push(self.created_at("created_at"));
        t.primary_key = Some(self.primary_key(&name, &["id"]));

        if let Some((parent, on_delete)) = spec.fk {
            let fk_name = format!("{}_parent_fk", spec.name);
            t.foreign_keys.insert(
                fk_name.clone(),
                ForeignKey {
                    name: fk_name,
                    columns: vec!["parent_id".to_owned()],
                    referenced_table: self.table_name("app", &all[parent].name),
                    referenced_columns: vec!["id".to_owned()],
                    on_delete,
                    on_update: ReferentialAction::NoAction,
                    options: ptah_schema::ForeignKeyOptions::default(),
                },
            );
        }
        if let Some(on) = spec.check {
            let (label, pg, my) = match on {
                CheckOn::Amount => ("amount", "amount >= 0", "`amount` >= 0"),
                CheckOn::Quantity => ("quantity", "quantity >= 0", "`quantity` >= 0"),
                CheckOn::Name => ("name", "char_length(name) > 0", "CHAR_LENGTH(`name`) > 0"),
                CheckOn::Ratio => ("ratio", "ratio >= 0 AND ratio <= 1", "`ratio` BETWEEN 0 AND 1"),
            };
            let check_name = format!("{}_{label}_chk", spec.name);
            let expression = self.expression(if self.pg() { pg } else { my });
            t.checks.insert(
                check_name.clone(),
                CheckConstraint {
                    name: check_name,
                    expression,
                },
            );
        }
        for ix in &spec.indexes {
            self.business_index(&mut t, spec, *ix);
        }
        if spec.comment {
            t.comment = Some(format!("Business table {}: {}", spec.i, spec.name));
        }
        t
    }

    fn business_index(&self, t: &mut Table, spec: &Spec, ix: Ix) {
        let nm = &spec.name;
        let expr = |text: &str| IndexPart {
            target: IndexTarget::Expression(self.expression(text)),
            descending: false,
            prefix_length: None,
            opclass: None,
            nulls_first: None,
        };
        let prefix = |column: &str, n: u32| IndexPart {
            prefix_length: Some(n),
            ..part(column)
        };
        let desc = IndexPart {
            descending: true,
            ..part("created_at")
        };
        let pg = self.pg();
        let (name, parts, predicate, method) = match ix {
            Ix::NameUnique if !pg => {
                // MySQL cannot tell a UNIQUE index on whole columns from a UNIQUE constraint.
                let name = format!("{nm}_name_key");
                let unique = UniqueConstraint {
                    name: name.clone(),
                    columns: vec!["name".to_owned()],
                };
                t.uniques.insert(name, unique);
                return;
            }
            Ix::NameUnique => (format!("{nm}_name_key"), vec![part("name")], None, None),
            Ix::CreatedAtDesc => (format!("{nm}_created_at_idx"), vec![desc], None, None),
            Ix::ForeignKey => (format!("{nm}_parent_id_idx"), vec![part("parent_id")], None, None),
            Ix::Partial if pg => (
                format!("{nm}_live_idx"),
                vec![part("created_at")],
                Some(self.expression("deleted_at IS NULL")),
                None,
            ),
            Ix::Partial => (
                format!("{nm}_live_idx"),
                vec![part("deleted_at"), part("created_at")],
                None,
                None,
            ),
            Ix::LowerName if pg => (
                format!("{nm}_lower_name_idx"),
                vec![expr("lower(name)")],
                None,
                None,
            ),
            Ix::LowerName => (
                format!("{nm}_name_prefix_idx"),
                vec![prefix("name", 16)],
                None,
                None,
            ),
            Ix::StatusCreated => (
                format!("{nm}_status_created_idx"),
                vec![part("status"), part("created_at")],
                None,
                None,
            ),
            Ix::DescriptionPrefix if pg => (
                format!("{nm}_description_idx"),
                vec![expr("left(description, 64)")],
                None,
                None,
            ),
            Ix::DescriptionPrefix => (
                format!("{nm}_description_idx"),
                vec![prefix("description", 64)],
                None,
                None,
            ),
            Ix::CodePrefix if pg => (
                format!("{nm}_code_idx"),
                vec![part("code")],
                Some(self.expression("code IS NOT NULL")),
                None,
            ),
            Ix::CodePrefix => (format!("{nm}_code_idx"), vec![prefix("code", 6)], None, None),
            // The model has no operator classes: the GIN index uses jsonb's default, jsonb_ops.
            Ix::GinData if pg => (format!("{nm}_data_gin"), vec![part("data")], None, Some("gin")),
            Ix::GinData => (
                format!("{nm}_created_id_idx"),
                vec![part("created_at"), part("id")],
                None,
                None,
            ),
        };
        let index = Index {
            name: name.clone(),
            unique: ix == Ix::NameUnique,
            parts,
            predicate,
            method: method.map(str::to_owned),
            include: Vec::new(),
            nulls_not_distinct: false,
            storage: Vec::new(),
        };
        t.indexes.insert(name, index);
    }

    fn insert(&mut self, t: Table) {
        self.schema.tables.insert(t.name.clone(), t);
    }

    fn index(t: &mut Table, name: &str, parts: Vec<IndexPart>, predicate: Option<String>) {
        let index = Index {
            name: name.to_owned(),
            unique: false,
            parts,
            predicate,
            method: None,
            include: Vec::new(),
            nulls_not_distinct: false,
            storage: Vec::new(),
        };
        t.indexes.insert(name.to_owned(), index);
    }

    /// The five fixed audit tables (schema `audit` on PostgreSQL, `audit_` tables on MySQL).
    fn audit_tables(&mut self, first: &str) {
        let pg = self.pg();
        let name = |b: &Builder, n: &str| b.table_name("audit", n);

        let event_log = name(self, "event_log");
        let mut t = Table::new(event_log.clone());
        t.columns.push(self.key_column("id", 64, true));
        let action = self.enum_type("audit", "action_t", &["insert", "update", "delete"]);
        t.columns.push(column("action", action, false));
        t.columns
            .push(column("table_name", DataType::Varchar(Some(63)), false));
        t.columns.push(column("row_id", int(64), true));
        t.columns
            .push(column("actor", DataType::Varchar(Some(128)), true));
        t.columns.push(column("diff", self.json(), true));
        t.columns.push(self.created_at("occurred_at"));
        t.primary_key = Some(self.primary_key(&event_log, &["id"]));
        let table_row = if pg {
            vec![part("table_name"), part("row_id")]
        } else {
            vec![
                IndexPart {
                    prefix_length: Some(32),
                    ..part("table_name")
                },
                part("row_id"),
            ]
        };
        Self::index(&mut t, "event_log_table_row_idx", table_row, None);
        if pg {
            let predicate = Some(self.expression("action <> 'insert'"));
            Self::index(
                &mut t,
                "event_log_recent_idx",
                vec![part("occurred_at")],
                predicate,
            );
        } else {
            let parts = vec![part("occurred_at"), part("action")];
            Self::index(&mut t, "event_log_recent_idx", parts, None);
        }
        self.insert(t);

        let actor = name(self, "actor");
        let mut t = Table::new(actor.clone());
        t.columns.push(self.key_column("id", 32, false));
        t.columns
            .push(column("login", DataType::Varchar(Some(64)), false));
        t.columns
            .push(column("display_name", DataType::Varchar(Some(255)), true));
        t.columns.push(self.created_at("created_at"));
        t.primary_key = Some(self.primary_key(&actor, &["id"]));
        let unique = UniqueConstraint {
            name: "actor_login_key".to_owned(),
            columns: vec!["login".to_owned()],
        };
        t.uniques.insert(unique.name.clone(), unique);
        self.insert(t);

        let account = name(self, "actor_account");
        let mut t = Table::new(account.clone());
        t.columns.push(column("actor_id", int(32), false));
        t.columns.push(column("account_id", int(64), false));
        t.columns.push(self.created_at("granted_at"));
        t.primary_key = Some(self.primary_key(&account, &["actor_id", "account_id"]));
        Self::index(
            &mut t,
            "actor_account_account_idx",
            vec![part("account_id")],
            None,
        );
        for (fk, col, target, on_delete) in [
            (
                "actor_account_actor_fk",
                "actor_id",
                actor.clone(),
                ReferentialAction::Cascade,
            ),
            (
                "actor_account_account_fk",
                "account_id",
                self.table_name("app", first),
                ReferentialAction::NoAction,
            ),
        ] {
            let key = ForeignKey {
                name: fk.to_owned(),
                columns: vec![col.to_owned()],
                referenced_table: target,
                referenced_columns: vec!["id".to_owned()],
                on_delete,
                on_update: ReferentialAction::NoAction,
                options: ptah_schema::ForeignKeyOptions::default(),
            };
            t.foreign_keys.insert(fk.to_owned(), key);
        }
        self.insert(t);

        let policy = name(self, "retention_policy");
        let mut t = Table::new(policy.clone());
        t.columns.push(self.key_column("id", 64, false));
        t.columns
            .push(column("table_name", DataType::Varchar(Some(63)), false));
        t.columns.push(column("keep_days", int(32), false));
        let cost = DataType::Decimal {
            precision: Some(12),
            scale: Some(2),
        };
        t.columns
            .push(self.with_default(column("cost", cost, true), "0.00"));
        t.columns.push(self.created_at("updated_at"));
        t.primary_key = Some(self.primary_key(&policy, &["id"]));
        let unique = UniqueConstraint {
            name: "retention_policy_table_uq".to_owned(),
            columns: vec!["table_name".to_owned()],
        };
        t.uniques.insert(unique.name.clone(), unique);
        let check = CheckConstraint {
            name: "retention_policy_keep_chk".to_owned(),
            expression: self.expression("keep_days > 0"),
        };
        t.checks.insert(check.name.clone(), check);
        self.insert(t);

        let attempt = name(self, "login_attempt");
        let mut t = Table::new(attempt.clone());
        t.columns.push(self.key_column("id", 64, false));
        t.columns.push(column("actor_id", int(32), true));
        let ip = if pg {
            DataType::Other {
                name: "inet".to_owned(),
                params: Vec::new(),
            }
        } else {
            DataType::Other {
                name: "varbinary".to_owned(),
                params: vec!["16".to_owned()],
            }
        };
        t.columns.push(column("ip", ip, true));
        t.columns
            .push(self.with_default(column("success", DataType::Boolean, false), "false"));
        t.columns.push(column("meta", self.json(), true));
        t.columns.push(self.created_at("attempted_at"));
        t.primary_key = Some(self.primary_key(&attempt, &["id"]));
        let (parts, predicate) = if pg {
            (
                vec![part("actor_id"), part("attempted_at")],
                Some(self.expression("NOT success")),
            )
        } else {
            (vec![part("actor_id"), part("attempted_at")], None)
        };
        Self::index(&mut t, "login_attempt_fail_idx", parts, predicate);
        let key = ForeignKey {
            name: "login_attempt_actor_fk".to_owned(),
            columns: vec!["actor_id".to_owned()],
            referenced_table: actor,
            referenced_columns: vec!["id".to_owned()],
            on_delete: ReferentialAction::SetNull,
            on_update: ReferentialAction::NoAction,
            options: ptah_schema::ForeignKeyOptions::default(),
        };
        t.foreign_keys.insert(key.name.clone(), key);
        self.insert(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_schema_and_both_engines_the_same_tables() {
        let a = schema(Dialect::Postgres, 50, 7);
        assert_eq!(a, schema(Dialect::Postgres, 50, 7));
        let my = schema(Dialect::Mysql, 50, 7);
        assert_eq!(a.tables.len(), 55);
        assert_eq!(my.tables.len(), 55);
        let columns = |s: &Schema| s.tables.values().map(|t| t.columns.len()).sum::<usize>();
        assert_eq!(columns(&a), columns(&my));
    }

    /// The inspector reads back what the readers would; a generated schema that is not already
    /// in that form plans changes against an unchanged database (MySQL's NO ACTION once did).
    #[test]
    fn the_generated_schema_is_already_canonical() {
        for dialect in [Dialect::Postgres, Dialect::Mysql] {
            let generated = schema(dialect, 120, 3);
            let text = ptah_schema::write::hcl::to_hcl(dialect, &generated);
            let read = ptah_schema::read::hcl::parse(dialect, "generated.hcl", &text).expect("reads back");
            assert!(
                read == generated,
                "{dialect:?}: the generated schema changes when read back"
            );
        }
    }

    #[test]
    fn foreign_keys_point_at_earlier_tables() {
        let s = schema(Dialect::Postgres, 200, 1);
        for t in s.tables.values() {
            for fk in t.foreign_keys.values() {
                assert!(s.tables.contains_key(&fk.referenced_table), "{fk:?}");
            }
        }
    }
}
