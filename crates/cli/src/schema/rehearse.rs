//! `ptah schema plan --dev-url`: the plan rehearsed on a scratch database before anyone approves
//! it ([`ptah_engine::rehearse`]).

use std::{fmt::Write as _, path::PathBuf};

use ptah_engine::{DatabaseUrl, Error as DbError, Rehearsal, RehearsalOutcome, Session};
use ptah_schema::{Plan, PlanOptions, Schema};

use super::{Failure, close, progress};
use crate::common::{EXIT_USAGE, Output, redacted_url};

/// Where to rehearse a plan.
#[derive(clap::Args)]
pub struct DevArgs {
    /// A scratch database of the same engine to rehearse the plan on: the observed schema is
    /// recreated there, the plan runs, and a fresh plan must be empty. It must hold nothing in
    /// the schema's scope, and is left as it was found.
    #[arg(long, env = "PTAH_DEV_URL", hide_env_values = true)]
    pub dev_url: Option<String>,
    /// PEM CA bundle for the dev database's TLS modes.
    #[arg(long)]
    pub dev_ca_file: Option<PathBuf>,
}

/// Shows the dev URL's scheme only.
impl std::fmt::Debug for DevArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevArgs")
            .field("dev_url", &self.dev_url.as_deref().map(redacted_url))
            .field("dev_ca_file", &self.dev_ca_file)
            .finish()
    }
}

/// Rehearses `plan` on the dev database; a dev database of another engine is refused.
pub(crate) async fn run(
    dev: &DevArgs,
    observed: &Schema,
    desired: &Schema,
    plan: &Plan,
    options: &PlanOptions,
    out: Output,
) -> Result<Rehearsal, Failure> {
    let Some(text) = dev.dev_url.as_deref() else {
        return Err(Failure::new("invalid_url", "no --dev-url", EXIT_USAGE));
    };
    let url = DatabaseUrl::parse(text)?.with_ca_file(dev.dev_ca_file.clone());
    if url.dialect() != plan.dialect {
        return Err(DbError::DialectMismatch {
            plan: plan.dialect,
            database: url.dialect(),
        }
        .into());
    }
    progress(out, &format!("rehearsing on {url}"));
    let mut session = Session::connect(&url, std::time::Duration::from_secs(10)).await?;
    let result = ptah_engine::rehearse(&mut session, observed, desired, plan, options).await;
    close(session).await;
    let mut rehearsal = result?;
    rehearsal.reason = rehearsal.reason.map(|r| url.scrub(&r));
    Ok(rehearsal)
}

/// The rehearsal's lines for people.
pub(crate) fn text(r: &Rehearsal) -> String {
    let total: u64 = r.statements.iter().map(|s| s.millis).sum();
    let mut s = String::new();
    let _ = match r.outcome {
        RehearsalOutcome::Passed => writeln!(
            s,
            "Rehearsal on the dev database: passed ({} statements in {total} ms; a fresh plan there is empty)",
            r.statements.len()
        ),
        RehearsalOutcome::Failed => writeln!(
            s,
            "Rehearsal on the dev database: FAILED: {}",
            r.reason.as_deref().unwrap_or("")
        ),
        RehearsalOutcome::Inconclusive => writeln!(
            s,
            "Rehearsal on the dev database: nothing rehearsed: {}",
            r.reason.as_deref().unwrap_or("")
        ),
    };
    for t in &r.statements {
        let _ = writeln!(s, "--   statement {}: {} ms", t.index + 1, t.millis);
    }
    if !r.restored {
        let _ = writeln!(
            s,
            "warning: the dev database could not be put back as it was found"
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_dev_urls_scheme_only() {
        let args = DevArgs {
            dev_url: Some("postgres://app:hunter2@db.internal:5432/scratch".into()),
            dev_ca_file: None,
        };
        let shown = format!("{args:?}");
        assert!(shown.contains("postgres://[REDACTED]"), "{shown}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("db.internal"),
            "{shown}"
        );
    }
}
