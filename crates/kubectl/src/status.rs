//! `kubectl ptah status`: one line per PtahSchema and PtahMigration.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{Api, Client, ResourceExt as _, api::ListParams};
use ptah_api::{
    PtahMigration, PtahSchema,
    conditions::ConditionType,
    migration::{PtahMigrationStatus, RunOutcome},
};
use serde::Serialize;

use crate::{Error, Io, style::Style};

/// One printed line; each cell is (plain text, how to paint it).
struct Row {
    kind: &'static str,
    namespace: String,
    name: String,
    phase: Cell,
    realm: Cell,
    last: Cell,
    approval: Cell,
    drift: Cell,
}

/// A cell's text and tone; the tone is applied after padding so colours keep columns aligned.
#[derive(Clone)]
struct Cell(String, Tone);

#[derive(Clone, Copy)]
enum Tone {
    Plain,
    Good,
    Attention,
    Bad,
}

impl Cell {
    fn plain(text: impl Into<String>) -> Cell {
        Cell(text.into(), Tone::Plain)
    }

    fn none() -> Cell {
        Cell::plain("-")
    }

    fn paint(&self, style: Style, width: usize) -> String {
        let padded = format!("{:<width$}", self.0);
        match self.1 {
            Tone::Plain => padded,
            Tone::Good => style.good(&padded),
            Tone::Attention => style.attention(&padded),
            Tone::Bad => style.bad(&padded),
        }
    }
}

/// Prints the table for one namespace, or all of them.
pub(crate) async fn show(client: &Client, namespace: Option<&str>, io: &mut Io<'_>) -> Result<(), Error> {
    let (schemas, migrations): (Api<PtahSchema>, Api<PtahMigration>) = match namespace {
        Some(ns) => (
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client.clone(), ns),
        ),
        None => (Api::all(client.clone()), Api::all(client.clone())),
    };
    let params = ListParams::default();
    let mut rows: Vec<Row> = schemas
        .list(&params)
        .await
        .map_err(Error::api("listing PtahSchemas"))?
        .items
        .iter()
        .map(schema_row)
        .collect();
    rows.extend(
        migrations
            .list(&params)
            .await
            .map_err(Error::api("listing PtahMigrations"))?
            .items
            .iter()
            .map(migration_row),
    );
    if rows.is_empty() {
        let scope = namespace.map_or("any namespace".to_owned(), |ns| format!("namespace {ns}"));
        return Err(Error::NothingStored(format!(
            "no PtahSchema or PtahMigration in {scope}"
        )));
    }
    rows.sort_by(|a, b| (&a.namespace, a.kind, &a.name).cmp(&(&b.namespace, b.kind, &b.name)));
    write!(
        io.out,
        "{}",
        table(&rows, namespace.is_none(), Style::new(io.colour))
    )?;
    Ok(())
}

fn table(rows: &[Row], with_namespace: bool, style: Style) -> String {
    let header = [
        "NAMESPACE",
        "KIND",
        "NAME",
        "PHASE",
        "REALM",
        "LAST OUTCOME",
        "APPROVAL",
        "DRIFT",
    ];
    let cells: Vec<[Cell; 8]> = rows
        .iter()
        .map(|r| {
            [
                Cell::plain(r.namespace.clone()),
                Cell::plain(r.kind),
                Cell::plain(r.name.clone()),
                r.phase.clone(),
                r.realm.clone(),
                r.last.clone(),
                r.approval.clone(),
                r.drift.clone(),
            ]
        })
        .collect();
    let first = usize::from(!with_namespace);
    let widths: Vec<usize> = (0..8)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].0.chars().count())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let line = |cells: Vec<String>| cells.join("   ").trim_end().to_owned() + "\n";
    out.push_str(&line(
        (first..8)
            .map(|i| format!("{:<w$}", header[i], w = widths[i]))
            .collect(),
    ));
    for row in &cells {
        out.push_str(&line(
            (first..8).map(|i| row[i].paint(style, widths[i])).collect(),
        ));
    }
    out
}

/// The API spelling of an enum value (`InSync`, `Partial`).
fn api_text<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_owned(),
    }
}

fn condition(conditions: &[Condition], kind: ConditionType) -> Option<&Condition> {
    conditions.iter().find(|c| c.type_ == kind.as_str())
}

fn is_true(conditions: &[Condition], kind: ConditionType) -> bool {
    condition(conditions, kind).is_some_and(|c| c.status == "True")
}

fn phase_cell(phase: Option<String>) -> Cell {
    match phase {
        None => Cell::plain("Pending"),
        Some(p) => {
            let tone = match p.as_str() {
                "InSync" => Tone::Good,
                "AwaitingApproval" | "Suspended" => Tone::Attention,
                "Blocked" | "Failed" => Tone::Bad,
                _ => Tone::Plain,
            };
            Cell(p, tone)
        }
    }
}

fn realm(key: Option<&String>) -> Cell {
    key.map_or_else(Cell::none, |k| Cell::plain(k.clone()))
}

/// `3m ago`, `2h ago`: coarse, for a glance.
fn ago(time: &Time) -> String {
    let seconds = (jiff::Timestamp::now() - time.0).get_seconds().max(0);
    match seconds {
        s if s < 120 => format!("{s}s ago"),
        s if s < 7200 => format!("{}m ago", s / 60),
        s if s < 172_800 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    }
}

fn waiting(conditions: &[Condition], plan: Option<&str>) -> Cell {
    if is_true(conditions, ConditionType::ApprovalRequired) {
        Cell(format!("waiting: {}", plan.unwrap_or("?")), Tone::Attention)
    } else {
        Cell::none()
    }
}

fn schema_row(s: &PtahSchema) -> Row {
    let status = s.status.clone().unwrap_or_default();
    let conditions = &status.conditions;
    let failed = condition(conditions, ConditionType::ReconciliationFailed).filter(|c| c.status == "True");
    let last = match (failed, &status.applied) {
        (Some(c), _) => Cell(format!("failed: {}", c.reason), Tone::Bad),
        (None, Some(applied)) => Cell(format!("applied {}", ago(&applied.completed_at)), Tone::Good),
        (None, None) => Cell::none(),
    };
    let drift = match condition(conditions, ConditionType::DriftDetected) {
        Some(c) if c.status == "True" => Cell(format!("drift: {}", c.reason), Tone::Bad),
        Some(_) => Cell(String::from("none"), Tone::Good),
        None => Cell::none(),
    };
    Row {
        kind: "PtahSchema",
        namespace: s.namespace().unwrap_or_default(),
        name: s.name_any(),
        phase: phase_cell(status.phase.map(|p| api_text(&p))),
        realm: realm(s.spec.target.coordination_key.as_ref()),
        last,
        approval: waiting(conditions, status.plan.as_ref().map(|p| p.name.as_str())),
        drift,
    }
}

fn migration_row(m: &PtahMigration) -> Row {
    let status: PtahMigrationStatus = m.status.clone().unwrap_or_default();
    let last = match (&status.unresolved_run, &status.last_run) {
        (Some(run), _) => Cell(format!("UNRESOLVED {}", api_text(&run.outcome)), Tone::Bad),
        (None, Some(run)) => {
            let tone = match run.outcome {
                RunOutcome::Applied | RunOutcome::UpToDate => Tone::Good,
                RunOutcome::Failed | RunOutcome::Partial | RunOutcome::Unknown => Tone::Bad,
            };
            Cell(api_text(&run.outcome), tone)
        }
        (None, None) => Cell::none(),
    };
    let drift = match &status.history {
        Some(h) if !h.modified_versions.is_empty() || !h.out_of_order_versions.is_empty() || h.dirty => {
            let mut parts = Vec::new();
            if h.dirty {
                parts.push("dirty".to_owned());
            }
            if !h.modified_versions.is_empty() {
                parts.push(format!("{} modified", h.modified_versions.len()));
            }
            if !h.out_of_order_versions.is_empty() {
                parts.push(format!("{} out of order", h.out_of_order_versions.len()));
            }
            Cell(parts.join(", "), Tone::Bad)
        }
        Some(_) => Cell(String::from("none"), Tone::Good),
        None => Cell::none(),
    };
    Row {
        kind: "PtahMigration",
        namespace: m.namespace().unwrap_or_default(),
        name: m.name_any(),
        phase: phase_cell(status.phase.map(|p| api_text(&p))),
        realm: realm(m.spec.target.coordination_key.as_ref()),
        last,
        approval: waiting(&status.conditions, status.plan.as_ref().map(|p| p.name.as_str())),
        drift,
    }
}
