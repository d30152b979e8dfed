//! Aggregates from `pg_aggregate`, as pg_dump prints them.
//!
//! pg_dump writes an aggregate's options from the catalog's columns (there is no
//! `pg_get_aggregatedef`); this reads the same columns and builds the same text, through
//! [`Routine::aggregate_definition`], with an empty `search_path` so support functions are
//! qualified as pg_dump qualifies them. Ordered-set and hypothetical aggregates and those with
//! moving-aggregate options are left out here and listed as not managed.

use ptah_schema::{QualifiedName, Routine, RoutineKind, RoutineOptions, Schema, Volatility};

use super::{get, pipeline::Pipeline};
use crate::Error;

/// Plain aggregates in scope, except extension members.
pub(super) const AGGREGATES: &str = r"
SELECT n.nspname::text, p.proname::text,
       pg_get_function_arguments(p.oid), pg_get_function_identity_arguments(p.oid),
       a.aggtransfn::regproc::text, format_type(a.aggtranstype, NULL), a.aggtransspace,
       a.agginitval,
       CASE WHEN a.aggfinalfn = 0 THEN NULL ELSE a.aggfinalfn::regproc::text END,
       a.aggfinalextra, a.aggfinalmodify::text,
       CASE WHEN a.aggcombinefn = 0 THEN NULL ELSE a.aggcombinefn::regproc::text END,
       CASE WHEN a.aggserialfn = 0 THEN NULL ELSE a.aggserialfn::regproc::text END,
       CASE WHEN a.aggdeserialfn = 0 THEN NULL ELSE a.aggdeserialfn::regproc::text END,
       CASE WHEN a.aggsortop = 0 THEN NULL
            ELSE 'OPERATOR(' || opn.nspname || '.' || o.oprname || ')' END,
       p.proparallel::text, d.description
FROM pg_proc p
JOIN pg_aggregate a ON a.aggfnoid = p.oid
JOIN pg_namespace n ON n.oid = p.pronamespace
LEFT JOIN pg_operator o ON o.oid = a.aggsortop
LEFT JOIN pg_namespace opn ON opn.oid = o.oprnamespace
LEFT JOIN pg_description d
       ON d.objoid = p.oid AND d.classoid = 'pg_proc'::regclass AND d.objsubid = 0
WHERE n.nspname = ANY($1) AND p.prokind = 'a' AND a.aggkind = 'n' AND a.aggmtransfn = 0
  AND NOT EXISTS (SELECT 1 FROM pg_depend x
                  WHERE x.classid = 'pg_proc'::regclass AND x.objid = p.oid AND x.deptype = 'e')";

/// Reads aggregates into `schema`; the caller has emptied `search_path`.
pub(super) async fn read(rows: &mut Pipeline<'_>, schema: &mut Schema) -> Result<(), Error> {
    for row in rows.next(AGGREGATES).await? {
        let mut options: Vec<(String, Option<String>)> = vec![
            ("SFUNC".to_owned(), Some(get(&row, 4)?)),
            ("STYPE".to_owned(), Some(get(&row, 5)?)),
        ];
        let space: i32 = get(&row, 6)?;
        if space != 0 {
            options.push(("SSPACE".to_owned(), Some(space.to_string())));
        }
        if let Some(init) = get::<Option<String>>(&row, 7)? {
            options.push((
                "INITCOND".to_owned(),
                Some(format!("'{}'", init.replace('\'', "''"))),
            ));
        }
        if let Some(finalfunc) = get::<Option<String>>(&row, 8)? {
            options.push(("FINALFUNC".to_owned(), Some(finalfunc)));
            if get::<bool>(&row, 9)? {
                options.push(("FINALFUNC_EXTRA".to_owned(), None));
            }
            // `r` (read only) is a plain aggregate's default, which pg_dump leaves out.
            let modify = match get::<String>(&row, 10)?.as_str() {
                "s" => Some("SHAREABLE"),
                "w" => Some("READ_WRITE"),
                _ => None,
            };
            if let Some(m) = modify {
                options.push(("FINALFUNC_MODIFY".to_owned(), Some(m.to_owned())));
            }
        }
        for (column, key) in [
            (11, "COMBINEFUNC"),
            (12, "SERIALFUNC"),
            (13, "DESERIALFUNC"),
            (14, "SORTOP"),
        ] {
            if let Some(value) = get::<Option<String>>(&row, column)? {
                options.push((key.to_owned(), Some(value)));
            }
        }
        let parallel = match get::<String>(&row, 15)?.as_str() {
            "s" => Some("safe"),
            "r" => Some("restricted"),
            _ => None,
        };
        if let Some(p) = parallel {
            options.push(("PARALLEL".to_owned(), Some(p.to_owned())));
        }
        let routine = Routine {
            name: QualifiedName::new(get::<String>(&row, 0)?, get::<String>(&row, 1)?),
            kind: RoutineKind::Aggregate,
            arguments: get(&row, 2)?,
            identity_arguments: get(&row, 3)?,
            returns: None,
            language: "internal".to_owned(),
            body: Routine::aggregate_definition(&options),
            volatility: Volatility::Volatile,
            strict: false,
            security_definer: false,
            comment: get(&row, 16)?,
            options: RoutineOptions::default(),
        };
        schema.routines.insert(routine.key(), routine);
    }
    Ok(())
}
