//! Names as the reader resolves them: identifier folding, schema qualification, implied schemas
//! and the table a name refers to. Apart from the statement dispatch because every statement
//! reader leans on these, and they hold the one place each dialect's naming rules live.

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};

use super::Reader;
use crate::model::{Dialect, QualifiedName};
use crate::read::{Location, ReadError};

impl Reader {
    /// An identifier as the server stores it: unquoted names fold to lowercase on PostgreSQL.
    pub(crate) fn ident(&self, ident: &Ident) -> String {
        match (self.dialect, ident.quote_style) {
            (Dialect::Postgres, None) => ident.value.to_lowercase(),
            _ => ident.value.clone(),
        }
    }

    /// A possibly schema-qualified name.
    pub(crate) fn qualified(&self, name: &ObjectName, at: &Location) -> Result<QualifiedName, ReadError> {
        let parts: Vec<&Ident> = name
            .0
            .iter()
            .filter_map(|p| match p {
                ObjectNamePart::Identifier(i) => Some(i),
                _ => None,
            })
            .collect();
        if parts.len() != name.0.len() {
            return Err(self.unsupported(at, format!("name {name}")));
        }
        match (self.dialect, parts.as_slice()) {
            (Dialect::Postgres, [n]) => Ok(QualifiedName::new("public", self.ident(n))),
            (Dialect::Postgres, [s, n]) => Ok(QualifiedName::new(self.ident(s), self.ident(n))),
            (Dialect::Mysql, [n]) => Ok(QualifiedName::new("", self.ident(n))),
            _ => Err(self.unsupported(at, format!("qualified name {name}"))),
        }
    }

    /// Checks an object's schema: `public`, declared, or implied. A schema whose `CREATE SCHEMA`
    /// comes later in the document, or never, is implied by the object placed in it and held like
    /// a declared one (the plan creates it when missing); the server's own schemas are refused.
    pub(crate) fn check_namespace(&mut self, name: &QualifiedName, at: &Location) -> Result<(), ReadError> {
        if self.dialect != Dialect::Postgres
            || name.schema == "public"
            || self.schema.namespaces.contains(&name.schema)
        {
            return Ok(());
        }
        if name.schema.starts_with("pg_") || name.schema == "information_schema" {
            return Err(ReadError::BadReference {
                at: at.clone(),
                what: format!("schema {} (the server's own)", name.schema),
            });
        }
        self.schema.namespaces.insert(name.schema.clone());
        self.implied.insert(name.schema.clone());
        Ok(())
    }

    pub(crate) fn table_mut(
        &mut self,
        q: &QualifiedName,
        at: &Location,
    ) -> Result<&mut crate::model::Table, ReadError> {
        if self.schema.views.contains_key(q) {
            return Err(self.unsupported(
                at,
                format!("{q} is a view: indexes, constraints and column comments on views are not modelled"),
            ));
        }
        self.schema
            .tables
            .get_mut(q)
            .ok_or_else(|| ReadError::BadReference {
                at: at.clone(),
                what: format!("table {q}"),
            })
    }
}
