//! MySQL inline keys with index options, as `mysqldump` writes them: ``KEY `i` (`a`) USING BTREE
//! COMMENT '…'`` and ``UNIQUE KEY `u` (`a`) USING HASH``.
//!
//! - `USING BTREE` is the default and changes nothing. `USING HASH` on a plain key is what InnoDB
//!   builds as a B-tree (the catalog says `BTREE`, only `SHOW CREATE TABLE` repeats the clause), so
//!   it changes nothing either; on a UNIQUE key MariaDB builds a hash-based unique index, which is
//!   held as a unique index with the method `hash`.
//! - A `COMMENT` goes to [`crate::model::Table::index_comments`]; a UNIQUE key with a comment is
//!   held as a unique index (an `index` block with `unique = true`), as the inspector reads it.

use sqlparser::ast::{CreateIndex, Ident, IndexColumn, IndexOption, IndexType, ObjectNamePart};

use crate::model::QualifiedName;

use super::super::{Location, ReadError};
use super::Reader;

/// An inline key as sqlparser reads it, whichever constraint it came from.
pub(super) struct Key<'a> {
    /// Its name.
    pub name: Option<&'a Ident>,
    /// `USING` before the columns.
    pub using: Option<&'a IndexType>,
    /// `USING` and `COMMENT` after them.
    pub options: &'a [IndexOption],
    /// The key parts.
    pub columns: &'a [IndexColumn],
    /// `UNIQUE KEY`.
    pub unique: bool,
}

impl Reader {
    /// An inline `KEY`, or a `UNIQUE KEY` with a `USING HASH` type or a comment.
    pub(super) fn mysql_keyed_index(
        &mut self,
        table: &QualifiedName,
        key: Key<'_>,
        at: &Location,
    ) -> Result<(), ReadError> {
        let Key {
            name,
            using,
            options,
            columns,
            unique,
        } = key;
        let mut method = using.map(|u| u.to_string().to_ascii_lowercase());
        let mut comment = None;
        for option in options {
            match option {
                IndexOption::Using(u) => method = Some(u.to_string().to_ascii_lowercase()),
                IndexOption::Comment(c) => comment = Some(c.clone()).filter(|c| !c.is_empty()),
            }
        }
        let hash = match method.as_deref() {
            None | Some("btree") => false,
            Some("hash") => unique,
            Some(other) => return Err(self.unsupported(at, format!("index type {other}"))),
        };
        let Some(name) = name.map(|n| self.ident(n)) else {
            return Err(self.unsupported(at, "an unnamed key with index options (name it)"));
        };
        let ident = Ident::new(&name);
        self.inline_index(table, Some(&ident), None, columns, at)?;
        let t = self.table_mut(table, at)?;
        if let Some(index) = t.indexes.get_mut(&name) {
            index.unique = unique;
            index.method = hash.then(|| "hash".to_owned());
        }
        if let Some(comment) = comment {
            t.index_comments.insert(name, comment);
        }
        Ok(())
    }
}

impl Reader {
    /// MySQL `CREATE [UNIQUE] INDEX i ON t (…) [USING …] [COMMENT '…']`: as the same key inline.
    pub(super) fn mysql_create_index(&mut self, create: CreateIndex, at: Location) -> Result<(), ReadError> {
        let plain = create.alter_options.is_empty()
            && create.include.is_empty()
            && create.nulls_distinct.is_none()
            && create.with.is_empty()
            && create.predicate.is_none();
        let name = match create.name.as_ref().map(|n| n.0.as_slice()) {
            Some([ObjectNamePart::Identifier(i)]) => i.clone(),
            _ => return Err(self.unsupported(&at, "CREATE INDEX with index options and no plain name")),
        };
        if !plain {
            return Err(self.unsupported(&at, "CREATE INDEX options (INCLUDE, NULLS DISTINCT, WITH, …)"));
        }
        let table = self.qualified(&create.table_name, &at)?;
        let key = Key {
            name: Some(&name),
            using: create.using.as_ref(),
            options: &create.index_options,
            columns: &create.columns,
            unique: create.unique,
        };
        self.mysql_keyed_index(&table, key, &at)
    }
}

/// Whether a key's type and options say nothing but the defaults (`USING BTREE`, no comment): a
/// UNIQUE key so written is a plain unique constraint.
pub(super) fn plain_btree(using: Option<&IndexType>, options: &[IndexOption]) -> bool {
    let btree = |t: &IndexType| t.to_string().eq_ignore_ascii_case("btree");
    using.is_none_or(btree)
        && options.iter().all(|o| match o {
            IndexOption::Using(t) => btree(t),
            IndexOption::Comment(c) => c.is_empty(),
        })
}
