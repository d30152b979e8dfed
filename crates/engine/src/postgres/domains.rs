//! Domains, read into the model's canonical parts.

use std::collections::BTreeMap;

use ptah_schema::normalize::{domain_base, domain_check};
use ptah_schema::{DataType, Domain, QualifiedName, Schema};

use super::{DIALECT, get, pipeline::Pipeline, queries};
use crate::{Error, canon};

/// Reads the domains in scope into `schema`.
pub(super) async fn read(rows: &mut Pipeline<'_>, schema: &mut Schema) -> Result<(), Error> {
    for row in rows.next(queries::DOMAINS).await? {
        let name = QualifiedName::new(get::<String>(&row, 0)?, get::<String>(&row, 1)?);
        let base = domain_base(&get::<String>(&row, 2)?);
        let collation = match (get::<Option<String>>(&row, 3)?, get::<Option<String>>(&row, 4)?) {
            (Some(s), Some(c)) if s == "pg_catalog" => Some(c),
            (Some(s), Some(c)) => {
                return Err(Error::Unsupported {
                    object: format!("domain {name}"),
                    reason: format!(
                        "its collation {s}.{c} is outside pg_catalog (user-defined collations are not modelled)"
                    ),
                });
            }
            _ => None,
        };
        let base_type = ptah_schema::types::parse_type(DIALECT, &base).unwrap_or(DataType::Other {
            name: base.clone(),
            params: Vec::new(),
        });
        let default = match get::<Option<String>>(&row, 5)? {
            Some(text) => canon::default(DIALECT, &base_type, &text),
            None => None,
        };
        let names: Vec<String> = get(&row, 7)?;
        let defs: Vec<String> = get(&row, 8)?;
        let checks: BTreeMap<String, String> = names
            .into_iter()
            .zip(defs.iter().map(|d| domain_check(d)))
            .collect();
        let domain = Domain {
            name: name.clone(),
            base,
            collation,
            default,
            not_null: get(&row, 6)?,
            checks,
            comment: get(&row, 9)?,
        };
        schema.domains.insert(name, domain);
    }
    Ok(())
}
