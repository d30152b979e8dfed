//! Functions, procedures and triggers from `pg_proc` and `pg_trigger`.
//!
//! Their catalog texts (`pg_get_function_arguments`, `pg_get_function_result`,
//! `pg_get_triggerdef`) are read with an empty `search_path`, so every name is qualified exactly
//! as `pg_dump` prints it; the rest of the inspection reads with `search_path = public`, which is
//! restored before returning.

use ptah_schema::{
    Parallel, QualifiedName, Routine, RoutineKind, RoutineOptions, Schema, Trigger, Volatility,
};

use super::{get, pipeline::Pipeline};
use crate::Error;

/// The routines the model holds: functions and procedures without the attributes it has no
/// field for (transforms, support functions, SQL-standard bodies, compiled code), and plain aggregates
/// without moving-aggregate options (`super::aggregates`). `unmodelled` lists the rest, so the
/// two must agree: both use this predicate over `pg_proc p` and `pg_language l`.
macro_rules! modelled_routine {
    () => {
        "((p.prokind IN ('f', 'p') AND l.lanname NOT IN ('c', 'internal') AND p.prosqlbody IS NULL
          AND p.protrftypes IS NULL AND p.prosupport = 0)
         OR (p.prokind = 'a' AND EXISTS (SELECT 1 FROM pg_aggregate ag WHERE ag.aggfnoid = p.oid
                                         AND ag.aggkind = 'n' AND ag.aggmtransfn = 0)))"
    };
}
pub(crate) use modelled_routine;

/// Functions and procedures in scope, except extension members and what PostgreSQL creates itself.
pub(super) const ROUTINES: &str = concat!(
    r"
SELECT n.nspname::text, p.proname::text, p.prokind::text,
       pg_get_function_arguments(p.oid), pg_get_function_identity_arguments(p.oid),
       pg_get_function_result(p.oid), l.lanname::text, p.prosrc,
       p.provolatile::text, p.proisstrict, p.prosecdef, d.description,
       COALESCE(p.proconfig, '{}')::text[], p.proparallel::text, p.proleakproof, p.procost,
       p.prorows, p.proretset
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang
LEFT JOIN pg_description d
       ON d.objoid = p.oid AND d.classoid = 'pg_proc'::regclass AND d.objsubid = 0
WHERE n.nspname = ANY($1)
  AND NOT EXISTS (SELECT 1 FROM pg_depend x
                  WHERE x.classid = 'pg_proc'::regclass AND x.objid = p.oid AND x.deptype IN ('e', 'i'))
  AND p.prokind <> 'a' AND ",
    modelled_routine!()
);

/// The model's triggers: user triggers on tables in scope that fire as usual (`tgenabled = 'O'`;
/// disabled and replica-only triggers are listed as unmodelled).
macro_rules! modelled_trigger {
    () => {
        "(NOT t.tgisinternal AND c.relkind IN ('r', 'p') AND t.tgparentid = 0 AND t.tgenabled = 'O')"
    };
}
pub(crate) use modelled_trigger;

/// Triggers in scope with their statements.
pub(super) const TRIGGERS: &str = concat!(
    r"
SELECT n.nspname::text, c.relname::text, t.tgname::text, pg_get_triggerdef(t.oid), d.description
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_description d ON d.objoid = t.oid AND d.classoid = 'pg_trigger'::regclass
WHERE n.nspname = ANY($1) AND ",
    modelled_trigger!()
);

/// Reads routines and triggers into `schema` (whose tables are already read); the caller has
/// emptied `search_path`.
pub(super) async fn read(rows: &mut Pipeline<'_>, schema: &mut Schema) -> Result<(), Error> {
    for row in rows.next(ROUTINES).await? {
        let kind = if get::<String>(&row, 2)? == "p" {
            RoutineKind::Procedure
        } else {
            RoutineKind::Function
        };
        let volatility = match get::<String>(&row, 8)?.as_str() {
            "i" => Volatility::Immutable,
            "s" => Volatility::Stable,
            _ => Volatility::Volatile,
        };
        let routine = Routine {
            name: QualifiedName::new(get::<String>(&row, 0)?, get::<String>(&row, 1)?),
            kind,
            arguments: get(&row, 3)?,
            identity_arguments: get(&row, 4)?,
            returns: get(&row, 5)?,
            language: get(&row, 6)?,
            body: get(&row, 7)?,
            // A procedure's catalog row says volatile and not strict; neither applies to it.
            volatility: if kind == RoutineKind::Procedure {
                Volatility::Volatile
            } else {
                volatility
            },
            strict: kind == RoutineKind::Function && get::<bool>(&row, 9)?,
            security_definer: get(&row, 10)?,
            comment: get(&row, 11)?,
            options: if kind == RoutineKind::Procedure {
                // A procedure keeps only its settings; the rest is a function's.
                RoutineOptions {
                    settings: get(&row, 12)?,
                    ..RoutineOptions::default()
                }
            } else {
                options(&row)?
            },
        };
        schema.routines.insert(routine.key(), routine);
    }
    for row in rows.next(TRIGGERS).await? {
        let table = QualifiedName::new(get::<String>(&row, 0)?, get::<String>(&row, 1)?);
        // An extension's table is not in the model, and neither are its triggers.
        if !schema.tables.contains_key(&table) {
            continue;
        }
        let trigger = Trigger {
            table,
            name: get(&row, 2)?,
            definition: get(&row, 3)?,
            comment: get(&row, 4)?,
        };
        schema.triggers.insert(trigger.key(), trigger);
    }
    Ok(())
}

/// A function's settings, parallel safety, leakproofness and estimates from its `pg_proc` row.
fn options(row: &tokio_postgres::Row) -> Result<RoutineOptions, Error> {
    let retset: bool = get(row, 17)?;
    Ok(RoutineOptions {
        settings: get(row, 12)?,
        parallel: match get::<String>(row, 13)?.as_str() {
            "s" => Some(Parallel::Safe),
            "r" => Some(Parallel::Restricted),
            _ => None,
        },
        leakproof: get(row, 14)?,
        cost: RoutineOptions::estimate(&get::<f32>(row, 15)?.to_string(), 100.0),
        // A function that returns no set has `prorows` 0, and no `ROWS` to write.
        rows: if retset {
            RoutineOptions::estimate(&get::<f32>(row, 16)?.to_string(), 1000.0)
        } else {
            None
        },
    })
}
