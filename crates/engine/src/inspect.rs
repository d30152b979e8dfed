//! Introspection: read a live database's catalog into the same [`Schema`] model the desired side uses.
//!
//! Each dialect reads its catalog with one set-based query per object kind (never one per table),
//! leaves out what the database creates implicitly (serial and identity sequences, indexes backing
//! PRIMARY KEY and UNIQUE constraints, extension-owned objects, partition copies, MariaDB's
//! `json_valid` checks), and canonicalizes every type and expression through `ptah_schema`, so a
//! live object and its declaration compare equal.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use ptah_schema::{MysqlFlavor, QualifiedName, Schema};

use crate::{Error, Session, mysql, postgres, rows};

/// Which part of a database to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InspectScope {
    /// PostgreSQL schemas to read; `None` reads every non-system schema. Ignored on MySQL, where the
    /// URL's database is the one namespace.
    pub namespaces: Option<BTreeSet<String>>,
    /// Tables whose reference rows to read, with the declared key and the columns to select.
    pub rows: BTreeMap<QualifiedName, RowSelection>,
}

/// The reference rows to read from one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSelection {
    /// The key columns, which also order the rows.
    pub key: Vec<String>,
    /// The other declared columns, in the order to select them.
    pub columns: Vec<String>,
}

impl InspectScope {
    /// Everything: every non-system schema, no reference rows (standalone `ptah schema inspect`).
    pub fn all() -> Self {
        InspectScope::default()
    }

    /// What a desired schema manages: its namespaces (declared, or used by its tables, enums,
    /// views, routines and triggers) and the reference rows it declares.
    pub fn of(desired: &Schema) -> Self {
        let mut namespaces = desired.namespaces.clone();
        namespaces.extend(desired.tables.keys().map(|n| n.schema.clone()));
        namespaces.extend(desired.enums.keys().map(|n| n.schema.clone()));
        namespaces.extend(desired.views.keys().map(|n| n.schema.clone()));
        namespaces.extend(desired.routines.keys().map(|n| n.schema.clone()));
        namespaces.extend(desired.triggers.keys().map(|n| n.schema.clone()));
        namespaces.extend(desired.domains.keys().map(|n| n.schema.clone()));
        namespaces.extend(desired.sequences.keys().map(|n| n.schema.clone()));
        namespaces.remove("");
        let rows = desired
            .tables
            .values()
            .filter_map(|table| {
                let declared = table.rows.as_ref()?;
                let mut others = BTreeSet::new();
                for row in &declared.rows {
                    others.extend(row.keys().filter(|c| !declared.key.contains(c)).cloned());
                }
                let selection = RowSelection {
                    key: declared.key.clone(),
                    columns: others.into_iter().collect(),
                };
                Some((table.name.clone(), selection))
            })
            .collect();
        InspectScope {
            namespaces: Some(namespaces),
            rows,
        }
    }
}

/// Reads the live schema within `scope`, including the reference rows the scope asks for.
pub async fn inspect(session: &mut Session, scope: &InspectScope) -> Result<Schema, Error> {
    let mut schema = match session {
        Session::Postgres { client, .. } => postgres::inspect(client, scope).await?,
        Session::MySql(conn) => mysql::inspect(conn, scope).await?,
    };
    rows::read(session, scope, &mut schema).await?;
    Ok(schema)
}

/// Which server speaks the MySQL dialect on `session` (`None` on PostgreSQL), for the planner.
pub async fn mysql_flavor(session: &mut Session) -> Result<Option<MysqlFlavor>, Error> {
    match session {
        Session::Postgres { .. } => Ok(None),
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            let version: Option<String> = conn.query_first("SELECT VERSION()").await.map_err(Error::mysql)?;
            Ok(Some(if version.is_some_and(|v| v.contains("MariaDB")) {
                MysqlFlavor::Mariadb
            } else {
                MysqlFlavor::Mysql
            }))
        }
    }
}

/// `desired` as the differ should see it against `live`, with what the server would print for
/// its hand-written PostgreSQL parts: a view whose query the server prints exactly as the live
/// view's takes the live text, so do a policy whose expressions the server prints as the live
/// policy's and a partition key and bound, routine signatures take the catalog's spelling (`a
/// int` is `a integer`), and so do generation expressions (`qty * price` is `(qty)::numeric *
/// price`). All are learned by creating the objects once in a transaction that is always rolled
/// back. MySQL has no transactional DDL: a hand-written view whose text differs from the live one
/// is created once under a probe name and dropped at once ([`crate::mysql`]'s `probe`); its other
/// definitions are compared in the reader's canonical form. Borrowed when nothing changes.
pub async fn comparable<'a>(
    session: &mut Session,
    desired: &'a Schema,
    live: &Schema,
) -> Result<Cow<'a, Schema>, Error> {
    into_comparable(session, Cow::Borrowed(desired), live).await
}

/// [`comparable`] for a caller that may give up its desired schema: an owned one is changed in
/// place, where a borrowed one is copied whole on the first change (at thousands of tables the
/// copy costs as much as the probes, and doubles the memory the models take).
pub async fn into_comparable<'a>(
    session: &mut Session,
    mut out: Cow<'a, Schema>,
    live: &Schema,
) -> Result<Cow<'a, Schema>, Error> {
    // The probes compare objects by table and column name: a table the document renames is
    // compared with the live one under its old name.
    let live = &*ptah_schema::diff::with_renames(&out, live);
    let client = match session {
        Session::Postgres { client, .. } => client,
        Session::MySql(conn) => {
            for name in mysql::views_equivalent_to_live(conn, &out, live).await? {
                if let (Some(view), Some(have)) = (out.to_mut().views.get_mut(&name), live.views.get(&name)) {
                    view.definition.clone_from(&have.definition);
                }
            }
            return Ok(out);
        }
    };
    // Each step below reads `out` as the steps before left it; they touch disjoint parts, so the
    // order only decides which step pays for a borrowed schema's copy.
    let same = postgres::views_equivalent_to_live(client, &out, live).await?;
    for name in same {
        if let (Some(view), Some(have)) = (out.to_mut().views.get_mut(&name), live.views.get(&name)) {
            view.definition.clone_from(&have.definition);
        }
    }
    for (table, policy) in postgres::policy_probe::equivalent_to_live(client, &out, live).await? {
        let have = live
            .tables
            .get(&table)
            .and_then(|t| t.security.policies.get(&policy));
        let want = out
            .to_mut()
            .tables
            .get_mut(&table)
            .and_then(|t| t.security.policies.get_mut(&policy));
        if let (Some(want), Some(have)) = (want, have) {
            want.using.clone_from(&have.using);
            want.check.clone_from(&have.check);
        }
    }
    for name in postgres::keys_equivalent_to_live(client, &out, live).await? {
        let have = live.tables.get(&name).and_then(|t| t.partition_by.clone());
        if let (Some(table), Some(have)) = (out.to_mut().tables.get_mut(&name), have) {
            table.partition_by = Some(have);
        }
    }
    for name in postgres::bounds_equivalent_to_live(client, &out, live).await? {
        let have = live.tables.get(&name).and_then(|t| t.partition_of.clone());
        if let (Some(table), Some(have)) = (out.to_mut().tables.get_mut(&name), have) {
            table.partition_of = Some(have);
        }
    }
    if postgres::canonical::pending(&out, live) {
        postgres::canonical::routines(client, out.to_mut(), live).await?;
    }
    for (table, column, text) in postgres::generated::equivalent_to_live(client, &out, live).await? {
        let generated = out
            .to_mut()
            .tables
            .get_mut(&table)
            .and_then(|t| t.columns.iter_mut().find(|c| c.name == column))
            .and_then(|c| c.generated.as_mut());
        if let Some(generated) = generated {
            generated.expression = text;
        }
    }
    let verdicts = postgres::cache::Verdicts;
    postgres::expressions::canonicalise(client, &mut out, live, verdicts).await?;
    if postgres::domain_probe::pending(&out, live) {
        postgres::domain_probe::canonicalise(client, out.to_mut(), live, verdicts).await?;
    }
    if postgres::trigger_probe::pending(&out, live) {
        postgres::trigger_probe::canonicalise(client, out.to_mut(), live, verdicts).await?;
    }
    Ok(out)
}
