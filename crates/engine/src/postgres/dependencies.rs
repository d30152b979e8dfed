//! An object the model holds may not depend on a routine it does not: a view that calls an
//! ordered-set aggregate, a default or check that calls a function with a SQL-standard body, a
//! trigger on such a function, an aggregate over one. Inspection would leave the routine out, and
//! a plan made from the inspected schema would fail on an empty database; inspection refuses
//! instead, naming both.

use super::program::{modelled_routine, modelled_trigger};
use super::{get, pipeline::Pipeline};
use crate::Error;

/// Modelled objects in scope (views' rules, defaults, constraints, modelled triggers and
/// routines) that depend on a routine outside `pg_catalog`, not an extension's, not modelled.
pub(super) const UNMODELLED_DEPENDENCIES: &str = concat!(
    r"
SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
       pg_describe_object(d.refclassid, d.refobjid, 0)
FROM pg_depend d
JOIN pg_namespace dn ON dn.oid = CASE d.classid
    WHEN 'pg_rewrite'::regclass THEN (SELECT c.relnamespace FROM pg_rewrite r
                                      JOIN pg_class c ON c.oid = r.ev_class WHERE r.oid = d.objid)
    WHEN 'pg_attrdef'::regclass THEN (SELECT c.relnamespace FROM pg_attrdef a
                                      JOIN pg_class c ON c.oid = a.adrelid WHERE a.oid = d.objid)
    WHEN 'pg_constraint'::regclass THEN (SELECT k.connamespace FROM pg_constraint k WHERE k.oid = d.objid)
    WHEN 'pg_trigger'::regclass THEN (SELECT c.relnamespace FROM pg_trigger t
                                      JOIN pg_class c ON c.oid = t.tgrelid WHERE t.oid = d.objid)
    WHEN 'pg_proc'::regclass THEN (SELECT q.pronamespace FROM pg_proc q WHERE q.oid = d.objid)
  END
JOIN pg_proc rp ON d.refclassid = 'pg_proc'::regclass AND rp.oid = d.refobjid
JOIN pg_namespace rn ON rn.oid = rp.pronamespace
WHERE d.deptype = 'n' AND dn.nspname = ANY($1)
  AND rn.nspname NOT IN ('pg_catalog', 'information_schema')
  AND NOT EXISTS (SELECT 1 FROM pg_depend x
                  WHERE x.classid = 'pg_proc'::regclass AND x.objid = rp.oid AND x.deptype IN ('e', 'i'))
  AND d.classid IN ('pg_rewrite'::regclass, 'pg_attrdef'::regclass, 'pg_constraint'::regclass,
                    'pg_trigger'::regclass, 'pg_proc'::regclass)
  AND (d.classid <> 'pg_trigger'::regclass OR d.objid IN (
        SELECT t.oid FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE ",
    modelled_trigger!(),
    r"))
  AND (d.classid <> 'pg_proc'::regclass OR d.objid IN (
        SELECT p.oid FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE ",
    modelled_routine!(),
    r"))
  AND rp.oid NOT IN (SELECT p.oid FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE ",
    modelled_routine!(),
    r")
ORDER BY 1, 2
LIMIT 1"
);

/// Refuses the inspection when a modelled object depends on a routine the model does not hold.
pub(super) async fn refuse_unmodelled(rows: &mut Pipeline<'_>) -> Result<(), Error> {
    if let Some(row) = rows.next(UNMODELLED_DEPENDENCIES).await?.first() {
        let object: String = get(row, 0)?;
        let routine: String = get(row, 1)?;
        return Err(Error::Unsupported {
            object,
            reason: format!(
                "it calls {routine}, which the model does not hold (see `unmodelled`), so a plan \
                 from this schema could not create it"
            ),
        });
    }
    Ok(())
}
