//! `kubectl ptah approve`: the only write. It shows the verified plan, asks, and creates the
//! approval bound to that plan's UIDs and fingerprint. The admission webhook then copies the plan's
//! bindings and stamps who approved; values a client sends for those are overwritten.

use kube::{Api, Client, Resource, ResourceExt as _, api::PostParams};
use ptah_api::{PtahMigrationApproval, PtahSchemaApproval, conditions::ConditionType};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::{
    Error, Io,
    plan::{self, Found},
    style::Style,
};

/// The longest plan name `approve-<plan>` is derived from; longer ones get a generated name.
const MAX_DERIVED_NAME: usize = 253;

/// Approves the plan `name` names (a plan, or a PtahSchema's current plan).
pub(crate) async fn approve(
    client: &Client,
    ns: &str,
    name: &str,
    yes: bool,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let style = Style::new(io.colour);
    let (shown, subject, manifest) = match plan::find(client, ns, name, false).await? {
        Found::Schema(plan) => {
            let spec = &plan.loaded.plan.spec;
            let plan_name = plan.loaded.plan.name_any();
            let manifest = approval(
                "PtahSchemaApproval",
                &plan_name,
                json!({
                    "schemaRef": spec.schema_ref,
                    "planRef": {"name": plan_name, "uid": plan.loaded.plan.uid()},
                    "planFingerprint": spec.fingerprint,
                }),
            );
            let subject = format!("plan {plan_name} of PtahSchema {ns}/{}", spec.schema_ref.name);
            (plan::text(ns, &plan, style), subject, Manifest::Schema(manifest))
        }
        Found::Migration(plan) => {
            let spec = &plan.spec;
            let plan_name = plan.name_any();
            let manifest = approval(
                "PtahMigrationApproval",
                &plan_name,
                json!({
                    "migrationRef": spec.migration_ref,
                    "planRef": {"name": plan_name, "uid": plan.uid()},
                    "planFingerprint": spec.fingerprint,
                }),
            );
            let subject = format!(
                "plan {plan_name} of PtahMigration {ns}/{}",
                spec.migration_ref.name
            );
            (
                plan::migration_text(&plan, style),
                subject,
                Manifest::Migration(manifest),
            )
        }
    };
    io.out.write_all(shown.as_bytes())?;
    if !yes {
        write!(io.err, "Approve {subject}? [y/N] ")?;
        io.err.flush()?;
        let mut answer = String::new();
        let read = io.input.read_line(&mut answer)?;
        if read == 0 {
            return Err(Error::NotConfirmed(
                "no answer (standard input is closed); pass --yes to approve without a question".to_owned(),
            ));
        }
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            return Err(Error::NotConfirmed(format!("{subject} was not approved")));
        }
    }
    let created = match manifest {
        Manifest::Schema(m) => create::<PtahSchemaApproval>(client, ns, m).await?,
        Manifest::Migration(m) => create::<PtahMigrationApproval>(client, ns, m).await?,
    };
    writeln!(io.err, "{} {subject}: {created}", style.good("approved"))?;
    Ok(())
}

enum Manifest {
    Schema(Value),
    Migration(Value),
}

fn approval(kind: &str, plan_name: &str, spec: Value) -> Value {
    let derived = format!("approve-{plan_name}");
    let metadata = if derived.len() <= MAX_DERIVED_NAME {
        json!({"name": derived})
    } else {
        json!({"generateName": "approve-"})
    };
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": kind,
        "metadata": metadata,
        "spec": spec,
    })
}

/// Creates the approval; returns `kind/name` of what the API server stored.
///
/// The derived name is taken when the same plan was approved before. A plan is named by its
/// fingerprint, so the same plan comes back when the database returns to a state it was in
/// (drift undone by hand, a spec put back): an approval already spent or stale then no longer
/// counts, and a new one gets a generated name. An approval still waiting to be spent is refused.
async fn create<K>(client: &Client, ns: &str, manifest: Value) -> Result<String, Error>
where
    K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let object: K = serde_json::from_value(manifest)
        .map_err(|e| Error::Output(std::io::Error::other(format!("building the approval: {e}"))))?;
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let failed = |e| Error::api(format!("creating the {}", K::kind(&())))(e);
    let created = match api.create(&PostParams::default(), &object).await {
        Ok(created) => created,
        Err(kube::Error::Api(status)) if status.code == 409 => {
            let name = object.name_any();
            let existing = api
                .get(&name)
                .await
                .map_err(Error::api(format!("reading {} {name}", K::kind(&()))))?;
            if !spent(&existing) {
                return Err(Error::Exists(format!(
                    "{} {name} exists already and is not spent yet: this plan has an approval \
                     waiting (kubectl get {} -n {ns})",
                    K::kind(&()),
                    K::plural(&()),
                )));
            }
            let mut again = object.clone();
            let meta = again.meta_mut();
            meta.generate_name = Some(format!("{name}-"));
            meta.name = None;
            api.create(&PostParams::default(), &again).await.map_err(failed)?
        }
        Err(e) => return Err(failed(e)),
    };
    Ok(format!("{}/{}", K::plural(&()), created.name_any()))
}

/// Whether an approval was spent on an Apply or marked stale (its `Consumed` or `Stale`
/// condition is true), so it no longer approves anything.
fn spent<K: serde::Serialize>(approval: &K) -> bool {
    let value = serde_json::to_value(approval).unwrap_or(Value::Null);
    let conditions = value["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions.iter().any(|c| {
        let ty = c["type"].as_str().unwrap_or_default();
        (ty == ConditionType::Consumed.as_str() || ty == ConditionType::Stale.as_str())
            && c["status"] == "True"
    })
}
