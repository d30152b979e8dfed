//! `kubectl ptah migration`: a PtahMigration's history, current plan, last run, and an unresolved
//! run with the exact acknowledgment to create once a person has checked the database. Never SQL.

use kube::{Api, Client, ResourceExt as _};
use ptah_api::{PtahMigration, PtahMigrationPlan, migration::UnresolvedRun};
use serde_json::{Value, json};

use crate::{Error, Io, TextOrJson, style::Style};

/// Prints migration `name`.
pub(crate) async fn show(
    client: &Client,
    ns: &str,
    name: &str,
    output: TextOrJson,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), ns);
    let migration = migrations
        .get_opt(name)
        .await
        .map_err(Error::api(format!("reading PtahMigration {ns}/{name}")))?
        .ok_or_else(|| Error::NotFound(format!("no PtahMigration named {name} in namespace {ns}")))?;
    let status = migration.status.clone().unwrap_or_default();
    let plan = match &status.plan {
        Some(reference) => {
            let plans: Api<PtahMigrationPlan> = Api::namespaced(client.clone(), ns);
            plans
                .get_opt(&reference.name)
                .await
                .map_err(Error::api(format!(
                    "reading PtahMigrationPlan {ns}/{}",
                    reference.name
                )))?
                // A plan replaced under the same name is not the one the status names.
                .filter(|p| p.uid().as_deref() == Some(reference.uid.as_str()))
        }
        None => None,
    };
    let acknowledgment = status
        .unresolved_run
        .as_ref()
        .map(|run| acknowledgment(&migration, run));
    match output {
        TextOrJson::Json => {
            let doc = json!({
                "namespace": ns,
                "name": name,
                "phase": status.phase,
                "history": status.history,
                "plan": plan.as_ref().map(|p| json!({"name": p.name_any(), "spec": p.spec})),
                "lastRun": status.last_run,
                "unresolvedRun": status.unresolved_run,
                "acknowledgment": acknowledgment,
            });
            let text =
                serde_json::to_string_pretty(&doc).map_err(|e| Error::Output(std::io::Error::other(e)))?;
            writeln!(io.out, "{text}")?;
        }
        TextOrJson::Text => {
            let text = text(
                ns,
                &migration,
                plan.as_ref(),
                acknowledgment.as_ref(),
                Style::new(io.colour),
            );
            io.out.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

/// The acknowledgment object for `run`: a name derived from the operation, so creating it twice
/// is refused by the API server instead of making a second one.
pub(crate) fn acknowledgment(migration: &PtahMigration, run: &UnresolvedRun) -> Value {
    let hex = run.operation_id.as_str().trim_start_matches("sha256:");
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahMigrationRunAcknowledgment",
        "metadata": {
            "name": format!("ack-{}-{}", migration.name_any(), &hex[..hex.len().min(12)]),
            "namespace": migration.namespace(),
        },
        "spec": {
            "migrationRef": {"name": migration.name_any(), "uid": migration.uid()},
            "operationID": run.operation_id,
        }
    })
}

/// The linter's verdict on a planned migration: its severity, coloured, and its codes.
fn lint_text(lint: &ptah_api::migrationplan::PlannedLint, style: Style) -> String {
    use ptah_api::migrationplan::LintSeverity as S;
    let severity = api_text(&lint.severity).to_lowercase();
    let painted = match lint.severity {
        S::Safe | S::Notice => style.good(&severity),
        S::Warning => style.attention(&severity),
        S::Error => style.bad(&severity),
    };
    if lint.codes.is_empty() {
        format!(" [{painted}]")
    } else {
        format!(" [{painted}: {}]", lint.codes.join(", "))
    }
}

fn field(out: &mut String, name: &str, value: impl std::fmt::Display) {
    out.push_str(&format!("{:<14}{value}\n", format!("{name}:")));
}

fn versions(list: &[i64]) -> String {
    list.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

fn api_text<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        _ => "?".to_owned(),
    }
}

fn text(
    ns: &str,
    m: &PtahMigration,
    plan: Option<&PtahMigrationPlan>,
    acknowledgment: Option<&Value>,
    style: Style,
) -> String {
    let status = m.status.clone().unwrap_or_default();
    let mut out = String::new();
    field(&mut out, "Migration", format!("{ns}/{}", m.name_any()));
    field(
        &mut out,
        "Phase",
        status.phase.as_ref().map_or("Pending".to_owned(), api_text),
    );
    if let Some(artifact) = &status.artifact {
        let reference = artifact
            .resolved_reference
            .as_deref()
            .or(artifact.requested_reference.as_deref());
        field(&mut out, "Artifact", reference.unwrap_or("-"));
    }
    match &status.history {
        None => field(&mut out, "History", "not read yet"),
        Some(h) => {
            field(&mut out, "History read", h.observed_at.0);
            let current = h.current_version.map_or("none".to_owned(), |v| v.to_string());
            field(
                &mut out,
                "Current",
                format!(
                    "{current} ({} applied, {} pending)",
                    h.applied_count, h.pending_count
                ),
            );
            if h.dirty {
                field(&mut out, "Dirty", style.bad("yes: a migration failed part-way"));
            }
            if !h.modified_versions.is_empty() {
                field(&mut out, "Modified", style.bad(&versions(&h.modified_versions)));
            }
            if !h.out_of_order_versions.is_empty() {
                field(
                    &mut out,
                    "Out of order",
                    style.bad(&versions(&h.out_of_order_versions)),
                );
            }
        }
    }
    if let Some(plan) = plan {
        field(&mut out, "Plan", plan.name_any());
        for step in &plan.spec.migrations {
            out.push_str(&format!(
                "  {} {}{}\n",
                style.bold(&step.version.to_string()),
                step.description.as_deref().unwrap_or(""),
                step.lint
                    .as_ref()
                    .map(|l| lint_text(l, style))
                    .unwrap_or_default()
            ));
        }
    }
    if let Some(run) = &status.last_run {
        let applied = if run.applied_versions.is_empty() {
            String::new()
        } else {
            format!(", applied {}", versions(&run.applied_versions))
        };
        field(
            &mut out,
            "Last run",
            format!("{} (Job {}{applied})", api_text(&run.outcome), run.job_name),
        );
        if let Some(message) = &run.message {
            field(&mut out, "Message", message);
        }
    }
    if let (Some(run), Some(ack)) = (&status.unresolved_run, acknowledgment) {
        field(
            &mut out,
            "Unresolved",
            style.bad(&format!(
                "{} run of Job {} (operation {}), recorded {}",
                api_text(&run.outcome),
                run.job_name,
                run.operation_id.as_str(),
                run.recorded_at.0
            )),
        );
        out.push_str(
            "\nNothing more runs until a person has checked the database and acknowledged this run:\n\n",
        );
        let manifest = serde_saphyr::to_string(ack).unwrap_or_else(|_| ack.to_string());
        out.push_str(&format!("kubectl create -f - <<'EOF'\n{manifest}EOF\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use ptah_api::migrationplan::{LintSeverity, PlannedLint};

    use super::*;

    #[test]
    fn a_planned_migration_shows_the_linters_severity_and_codes() {
        let plain = Style::new(false);
        let lint = |severity, codes: &[&str]| PlannedLint {
            severity,
            codes: codes.iter().map(|c| (*c).to_owned()).collect(),
        };
        assert_eq!(lint_text(&lint(LintSeverity::Safe, &[]), plain), " [safe]");
        assert_eq!(
            lint_text(&lint(LintSeverity::Warning, &["PG101", "SQL001"]), plain),
            " [warning: PG101, SQL001]"
        );
        let coloured = lint_text(&lint(LintSeverity::Error, &["DS102"]), Style::new(true));
        assert!(
            coloured.contains("\u{1b}[31m") && coloured.contains("DS102"),
            "{coloured:?}"
        );
    }
}
