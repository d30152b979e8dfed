//! Sequences: every sequence in scope that is neither an identity's nor an extension's, except a
//! serial column's implicit one (owned by it, default options, drawn by its default, no comment),
//! which reads as part of its column exactly as the SQL reader folds it.

use ptah_schema::names::serial_default;
use ptah_schema::{DefaultValue, QualifiedName, Schema, Sequence, SequenceOwner, SequenceType};

use super::{get, pipeline::Pipeline};
use crate::Error;

pub(super) const SEQUENCES: &str = r"
SELECT n.nspname::text, c.relname::text, format_type(s.seqtypid, NULL),
       s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache, s.seqcycle,
       tn.nspname::text AS owner_schema, tc.relname::text AS owner_table, a.attname::text AS owner_column,
       d.description
FROM pg_sequence s
JOIN pg_class c ON c.oid = s.seqrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_depend dep
       ON dep.classid = 'pg_class'::regclass AND dep.objid = c.oid
      AND dep.refclassid = 'pg_class'::regclass AND dep.deptype = 'a'
LEFT JOIN pg_class tc ON tc.oid = dep.refobjid
LEFT JOIN pg_namespace tn ON tn.oid = tc.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = dep.refobjid AND a.attnum = dep.refobjsubid
LEFT JOIN pg_description d
       ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
WHERE n.nspname = ANY($1)
  AND NOT EXISTS (SELECT 1 FROM pg_depend x
                  WHERE x.classid = 'pg_class'::regclass AND x.objid = c.oid AND x.deptype IN ('i', 'e'))";

/// Reads the sequences in scope into `schema`; its tables and columns are already read.
pub(super) async fn read(rows: &mut Pipeline<'_>, schema: &mut Schema) -> Result<(), Error> {
    for row in rows.next(SEQUENCES).await? {
        let name = QualifiedName::new(get::<String>(&row, 0)?, get::<String>(&row, 1)?);
        let type_name: String = get(&row, 2)?;
        let Some(data_type) = SequenceType::parse(&type_name) else {
            return Err(Error::Unsupported {
                object: format!("sequence {name}"),
                reason: format!("its type {type_name} is not smallint, integer or bigint"),
            });
        };
        let owned_by = match (
            get::<Option<String>>(&row, 9)?,
            get::<Option<String>>(&row, 10)?,
            get::<Option<String>>(&row, 11)?,
        ) {
            (Some(schema), Some(table), Some(column)) => Some(SequenceOwner {
                table: QualifiedName::new(schema, table),
                column,
            }),
            _ => None,
        };
        let sequence = Sequence {
            name,
            data_type,
            start: get(&row, 3)?,
            increment: get(&row, 4)?,
            min: get(&row, 5)?,
            max: get(&row, 6)?,
            cache: get(&row, 7)?,
            cycle: get(&row, 8)?,
            owned_by,
            comment: get(&row, 12)?,
        };
        if !is_serial(schema, &sequence) {
            schema.sequences.insert(sequence.name.clone(), sequence);
        }
    }
    Ok(())
}

fn is_serial(schema: &Schema, s: &Sequence) -> bool {
    let Some(owner) = &s.owned_by else {
        return false;
    };
    let serial = DefaultValue::Expression(serial_default(&s.name, &s.name.name));
    let draws = schema
        .tables
        .get(&owner.table)
        .and_then(|t| t.column(&owner.column))
        .is_some_and(|c| c.default.as_ref() == Some(&serial));
    draws && s.comment.is_none() && s.has_serial_options()
}
