//! `kubectl ptah plan`: find the plan a name points at, load it through the plan store (every
//! chunk's name, UID, position, size and digest, and the plan's fingerprint), and only then print.

use kube::{Api, Client, ResourceExt as _};
use ptah_api::{
    PtahMigrationPlan, PtahSchema, PtahSchemaPlan,
    schema::{PlanRehearsal, RehearsalOutcome},
    shared::{ImmutableObjectReference, PlanSeverity},
};
use ptah_planstore::{LoadedPlan, PlanStore};
use ptah_schema::{Plan, Severity};

use crate::{Error, Io, PlanFormat, error::is_not_found, style::Style};

/// What a name given to `plan` or `approve` turned out to be.
pub(crate) enum Found {
    /// A schema plan, loaded and verified.
    Schema(Box<VerifiedPlan>),
    /// A migration plan (one object, no chunks).
    Migration(Box<PtahMigrationPlan>),
}

/// A schema plan that passed every check, with its parsed document.
pub(crate) struct VerifiedPlan {
    pub loaded: LoadedPlan,
    pub document: Plan,
    /// The rehearsal the PtahSchema's status records for it, when it was found as the current plan.
    pub rehearsal: Option<PlanRehearsal>,
}

/// Prints the plan `name` names.
pub(crate) async fn show(
    client: &Client,
    ns: &str,
    name: &str,
    applied: bool,
    format: PlanFormat,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let style = Style::new(io.colour);
    match find(client, ns, name, applied).await? {
        Found::Schema(plan) => match format {
            PlanFormat::Json => io.out.write_all(&plan.loaded.bytes)?,
            PlanFormat::Sql => io.out.write_all(sql(&plan.document).as_bytes())?,
            PlanFormat::Text => io.out.write_all(text(ns, &plan, style).as_bytes())?,
        },
        Found::Migration(plan) => match format {
            PlanFormat::Json => {
                let json = serde_json::to_string_pretty(&plan.spec)
                    .map_err(|e| Error::Output(std::io::Error::other(e)))?;
                writeln!(io.out, "{json}")?;
            }
            PlanFormat::Sql | PlanFormat::Text => {
                io.out.write_all(migration_text(&plan, style).as_bytes())?;
            }
        },
    }
    Ok(())
}

/// A PtahSchema's current (or applied) plan, else a PtahSchemaPlan or PtahMigrationPlan by name.
pub(crate) async fn find(client: &Client, ns: &str, name: &str, applied: bool) -> Result<Found, Error> {
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), ns);
    if let Some(schema) = schemas
        .get_opt(name)
        .await
        .map_err(Error::api(format!("reading PtahSchema {ns}/{name}")))?
    {
        let status = schema.status.as_ref();
        let rehearsal = status
            .and_then(|s| s.plan.as_ref())
            .and_then(|p| p.rehearsal.clone())
            .filter(|_| !applied);
        let reference = if applied {
            status
                .and_then(|s| s.applied.as_ref())
                .map(|a| a.plan_ref.clone())
        } else {
            status
                .and_then(|s| s.plan.as_ref())
                .map(|p| ImmutableObjectReference {
                    name: p.name.clone(),
                    uid: p.uid.clone(),
                })
        };
        let Some(reference) = reference else {
            let which = if applied { "applied" } else { "current" };
            return Err(Error::NothingStored(format!(
                "PtahSchema {ns}/{name} has no {which} plan"
            )));
        };
        let mut plan = load(client, ns, &reference).await?;
        plan.rehearsal = rehearsal;
        return Ok(Found::Schema(plan));
    }
    let plans: Api<PtahSchemaPlan> = Api::namespaced(client.clone(), ns);
    match plans.get(name).await {
        Ok(plan) => {
            let reference = ImmutableObjectReference {
                name: plan.name_any(),
                uid: plan.uid().unwrap_or_default(),
            };
            return load(client, ns, &reference).await.map(Found::Schema);
        }
        Err(e) if is_not_found(&e) => {}
        Err(e) => return Err(Error::api(format!("reading PtahSchemaPlan {ns}/{name}"))(e)),
    }
    let migrations: Api<PtahMigrationPlan> = Api::namespaced(client.clone(), ns);
    match migrations.get(name).await {
        Ok(plan) => Ok(Found::Migration(Box::new(plan))),
        Err(e) if is_not_found(&e) => Err(Error::NotFound(format!(
            "no PtahSchema, PtahSchemaPlan or PtahMigrationPlan named {name} in namespace {ns}"
        ))),
        Err(e) => Err(Error::api(format!("reading PtahMigrationPlan {ns}/{name}"))(e)),
    }
}

async fn load(
    client: &Client,
    ns: &str,
    reference: &ImmutableObjectReference,
) -> Result<Box<VerifiedPlan>, Error> {
    let loaded = PlanStore::new(client.clone())
        .load(ns, reference)
        .await
        .map_err(|e| Error::refused(&reference.name, &e))?;
    let document: Plan = serde_json::from_slice(&loaded.bytes).map_err(|e| Error::Refused {
        name: reference.name.clone(),
        // serde's message may quote the document; its position is enough.
        reason: format!(
            "the stored document is not a plan (line {}, column {})",
            e.line(),
            e.column()
        ),
    })?;
    let counted = document.statements.len();
    if i32::try_from(counted).ok() != Some(loaded.plan.spec.statement_count)
        || document.destructive != loaded.plan.spec.destructive
    {
        return Err(Error::Refused {
            name: reference.name.clone(),
            reason: format!(
                "the document holds {counted} statements (destructive: {}), the plan object records {} (destructive: {})",
                document.destructive, loaded.plan.spec.statement_count, loaded.plan.spec.destructive
            ),
        });
    }
    Ok(Box::new(VerifiedPlan {
        loaded,
        document,
        rehearsal: None,
    }))
}

/// The statements in order, each terminated once (never re-split).
pub(crate) fn sql(plan: &Plan) -> String {
    plan.statements.iter().map(|s| format!("{};\n", s.sql)).collect()
}

fn severity(style: Style, severity: Severity) -> String {
    match severity {
        Severity::Safe => style.good("safe"),
        Severity::Warning => style.attention("warning"),
        Severity::Destructive => style.bad("DESTRUCTIVE"),
    }
}

/// A header, then every statement with its severity and the planner's reason.
pub(crate) fn text(ns: &str, plan: &VerifiedPlan, style: Style) -> String {
    let spec = &plan.loaded.plan.spec;
    let doc = &plan.document;
    let mut out = String::new();
    let mut field = |name: &str, value: String| out.push_str(&format!("{:<14}{value}\n", format!("{name}:")));
    field("Schema", format!("{ns}/{}", spec.schema_ref.name));
    field("Plan", plan.loaded.plan.name_any());
    field("Fingerprint", spec.fingerprint.as_str().to_owned());
    field(
        "Content",
        format!(
            "{} ({} bytes in {} chunks, every digest verified)",
            spec.content_digest.as_str(),
            spec.size,
            spec.chunks.len()
        ),
    );
    field("Dialect", spec.dialect.clone());
    field(
        "Statements",
        format!(
            "{}{}",
            doc.statements.len(),
            if doc.destructive {
                format!(", {}", style.bad("destructive"))
            } else {
                String::new()
            }
        ),
    );
    if !spec.privilege_changes.is_empty() {
        let kinds: Vec<String> = spec.privilege_changes.iter().map(|k| format!("{k:?}")).collect();
        field("Privileges", style.attention(&kinds.join(", ")));
    }
    if let Some(class) = spec.severity {
        // What `policy.apply: BySeverity` decides by, as the operator read it.
        field(
            "Severity",
            match class {
                PlanSeverity::Safe => "safe".to_owned(),
                PlanSeverity::Warning => style.attention("warning"),
                PlanSeverity::Destructive => style.bad("destructive"),
            },
        );
    }
    if let Some(r) = &plan.rehearsal {
        field("Rehearsal", rehearsal(r, style));
    }
    out.push('\n');
    if doc.statements.is_empty() {
        out.push_str("-- no changes: the database matches the desired schema\n");
    }
    let total = doc.statements.len();
    for (i, statement) in doc.statements.iter().enumerate() {
        let lock = doc
            .locks
            .iter()
            .find(|l| l.statement == i)
            .map(|l| {
                let rows = l
                    .estimated_rows
                    .map_or_else(|| "no estimate".to_owned(), |r| format!("about {r} rows"));
                format!("-- takes {} on {} ({rows})\n", l.lock, l.table)
            })
            .unwrap_or_default();
        let rehearsed = plan
            .rehearsal
            .as_ref()
            .and_then(|r| r.statement_millis.get(i))
            .map(|ms| format!("-- rehearsed in {ms} ms\n"))
            .unwrap_or_default();
        out.push_str(&format!(
            "-- {}/{total} {}: {}\n{lock}{rehearsed}{};\n\n",
            i + 1,
            severity(style, statement.severity),
            statement.reason,
            statement.sql
        ));
    }
    out
}

/// A rehearsal on the dev database in one line: passed in how long, or why it did not pass.
fn rehearsal(r: &PlanRehearsal, style: Style) -> String {
    let why = r.message.as_deref().unwrap_or("no reason recorded");
    match r.outcome {
        RehearsalOutcome::Passed => {
            style.good(&format!("passed in {} ms on the dev database", r.total_millis))
        }
        RehearsalOutcome::Failed => style.bad(&match r.failed_statement {
            Some(n) => format!("FAILED at statement {n}: {why}"),
            None => format!("FAILED: {why}"),
        }),
        RehearsalOutcome::Inconclusive => style.attention(&format!("inconclusive: {why}")),
    }
}

/// A migration plan's steps: version and description, never SQL.
pub(crate) fn migration_text(plan: &PtahMigrationPlan, style: Style) -> String {
    let spec = &plan.spec;
    let mut out = format!(
        "{:<14}{}\n{:<14}{}\n{:<14}{}\n{:<14}{}\n\n",
        "Migration:",
        spec.migration_ref.name,
        "Plan:",
        plan.name_any(),
        "Fingerprint:",
        spec.fingerprint,
        "From version:",
        spec.current_version,
    );
    for step in &spec.migrations {
        let description = step.description.as_deref().unwrap_or("");
        out.push_str(&format!(
            "  {} {description}{}\n",
            style.bold(&step.version.to_string()),
            if step.checkpoint { " (checkpoint)" } else { "" }
        ));
    }
    out
}
