//! Row-level security, policies and table grants: three catalog queries for the whole namespace
//! set, run in the phase with an empty `search_path`, so policy expressions print every name
//! qualified, as `pg_dump` writes them. The owner's own privileges are left out (they are what
//! owning the table means; `pg_dump` writes no GRANT for them either).

use std::collections::BTreeSet;

use ptah_schema::{PUBLIC, Policy, PolicyCommand, Privilege, QualifiedName, Schema};

use super::{DIALECT, get, pipeline::Pipeline};
use crate::{Error, canon};

/// Tables with row-level security enabled or forced.
pub(super) const ROW_SECURITY: &str = r"
SELECT n.nspname::text, c.relname::text, c.relrowsecurity, c.relforcerowsecurity
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname = ANY($1)
  AND (c.relrowsecurity OR c.relforcerowsecurity)";

/// Every table privilege held by a role other than the table's owner (grantee 0 is PUBLIC).
pub(super) const GRANTS: &str = r"
SELECT n.nspname::text, c.relname::text,
       CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE r.rolname::text END, a.privilege_type, a.is_grantable
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL aclexplode(c.relacl) a
LEFT JOIN pg_roles r ON r.oid = a.grantee
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname = ANY($1)
  AND c.relacl IS NOT NULL AND a.grantee <> c.relowner";

/// Policies with their roles (none: PUBLIC) and expressions as `pg_dump` prints them.
pub(super) const POLICIES: &str = r"
SELECT n.nspname::text, c.relname::text, p.polname::text, p.polcmd::text, p.polpermissive,
       CASE WHEN 0 = ANY(p.polroles) THEN ARRAY[]::text[]
            ELSE ARRAY(SELECT r.rolname::text FROM pg_roles r WHERE r.oid = ANY(p.polroles)) END,
       pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)
FROM pg_policy p
JOIN pg_class c ON c.oid = p.polrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname = ANY($1)";

/// Reads the row-level security, grants and policies of the tables in `schema`; the caller has
/// emptied `search_path`.
pub(super) async fn read(rows: &mut Pipeline<'_>, schema: &mut Schema) -> Result<(), Error> {
    let name = |row: &tokio_postgres::Row| -> Result<QualifiedName, Error> {
        Ok(QualifiedName::new(get::<String>(row, 0)?, get::<String>(row, 1)?))
    };
    for row in rows.next(ROW_SECURITY).await? {
        if let Some(t) = schema.tables.get_mut(&name(&row)?) {
            t.security.row_security = get(&row, 2)?;
            t.security.force_row_security = get(&row, 3)?;
        }
    }
    for row in rows.next(GRANTS).await? {
        let Some(t) = schema.tables.get_mut(&name(&row)?) else {
            continue;
        };
        // A grantee dropped since (its oid is left in the ACL) has no name to grant to again.
        let Some(role) = get::<Option<String>>(&row, 2)? else {
            continue;
        };
        let privilege: String = get(&row, 3)?;
        let privilege = Privilege::from_keyword(&privilege).ok_or_else(|| Error::Unsupported {
            object: format!("table {}", t.name),
            reason: format!("privilege {privilege} is not modelled"),
        })?;
        t.security
            .grant(&role, &BTreeSet::from([privilege]), get(&row, 4)?);
    }
    for row in rows.next(POLICIES).await? {
        let Some(t) = schema.tables.get_mut(&name(&row)?) else {
            continue;
        };
        let policy_name: String = get(&row, 2)?;
        let command = match get::<String>(&row, 3)?.as_str() {
            "r" => PolicyCommand::Select,
            "a" => PolicyCommand::Insert,
            "w" => PolicyCommand::Update,
            "d" => PolicyCommand::Delete,
            _ => PolicyCommand::All,
        };
        let roles: BTreeSet<String> = get::<Vec<String>>(&row, 5)?.into_iter().collect();
        let expression = |i: usize| -> Result<Option<String>, Error> {
            Ok(get::<Option<String>>(&row, i)?.map(|e| canon::expression(DIALECT, &e)))
        };
        let policy = Policy {
            name: policy_name.clone(),
            command,
            restrictive: !get::<bool>(&row, 4)?,
            roles: if roles.contains(PUBLIC) {
                BTreeSet::new()
            } else {
                roles
            },
            using: expression(6)?,
            check: expression(7)?,
        };
        t.security.policies.insert(policy_name, policy);
    }
    Ok(())
}
