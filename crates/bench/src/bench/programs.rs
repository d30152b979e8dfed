//! The program objects of the bench schema, so inspect and plan are measured with them: a view
//! over every tenth business table, and a trigger on every twentieth (on PostgreSQL through one
//! shared plpgsql function). Their text is written by hand here; after creating them the bench
//! takes the catalog's text back ([`as_dumped`]), as a dump carries it.

use ptah_schema::{Dialect, QualifiedName, Routine, RoutineKind, Schema, Trigger, View, Volatility};

/// Adds the views, the trigger function and the triggers to `schema` (its business tables are
/// the ones with a `name` column, in name order).
pub fn add(schema: &mut Schema, dialect: Dialect) {
    let pg = dialect == Dialect::Postgres;
    let tables: Vec<QualifiedName> = schema
        .tables
        .values()
        .filter(|t| t.column("name").is_some() && t.column("amount").is_some())
        .map(|t| t.name.clone())
        .collect();
    let touch = QualifiedName::new(if pg { "app" } else { "" }, "bench_touch");
    for (i, table) in tables.iter().enumerate() {
        let quoted = if pg {
            format!("{}.{}", table.schema, table.name)
        } else {
            format!("`{}`", table.name)
        };
        if i % 10 == 0 {
            let name = QualifiedName::new(table.schema.clone(), format!("v_{}", table.name));
            let definition = format!("SELECT id, name, amount FROM {quoted} WHERE amount IS NOT NULL");
            schema.views.insert(
                name.clone(),
                View {
                    name,
                    materialized: false,
                    definition,
                    comment: None,
                },
            );
        }
        if i % 20 == 0 {
            let name = format!("t_{}", table.name);
            let definition = if pg {
                format!(
                    "CREATE TRIGGER {name} BEFORE UPDATE ON {quoted} FOR EACH ROW EXECUTE FUNCTION {}.{}()",
                    touch.schema, touch.name
                )
            } else {
                format!(
                    "CREATE TRIGGER `{name}` BEFORE UPDATE ON {quoted} FOR EACH ROW SET NEW.name = TRIM(NEW.name)"
                )
            };
            let trigger = Trigger {
                table: table.clone(),
                name,
                definition,
                comment: None,
            };
            schema.triggers.insert(trigger.key(), trigger);
        }
    }
    if pg {
        let routine = Routine {
            name: touch,
            kind: RoutineKind::Function,
            arguments: String::new(),
            identity_arguments: String::new(),
            returns: Some("trigger".to_owned()),
            language: "plpgsql".to_owned(),
            body: "\nBEGIN\n  NEW.name := btrim(NEW.name);\n  RETURN NEW;\nEND;\n".to_owned(),
            volatility: Volatility::Volatile,
            strict: false,
            security_definer: false,
            options: ptah_schema::RoutineOptions::default(),
            comment: None,
        };
        schema.routines.insert(routine.key(), routine);
    }
}

/// `desired` with the views, routines and triggers of `live` (the same objects, in the
/// catalog's text), as a dump of that database would declare them.
pub fn as_dumped(desired: &Schema, live: &Schema) -> Schema {
    let mut out = desired.clone();
    out.views.clone_from(&live.views);
    out.routines.clone_from(&live.routines);
    out.triggers.clone_from(&live.triggers);
    out
}
