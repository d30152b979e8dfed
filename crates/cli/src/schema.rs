//! `ptah schema inspect|drift|plan|apply`: the declared-schema engine on one database.
//!
//! Exit codes: 0 success (in sync, empty plan, applied and verified); 1 the command ran and found
//! something (drift, pending changes, a stale plan, a failed or unverified apply); 2 bad input, an
//! unreachable database or a refused gate (destructive plan, protected table, lock busy).

use std::borrow::Cow;
use std::sync::Arc;
use std::{fmt::Write as _, io::IsTerminal, path::PathBuf, time::Duration};

use clap::Subcommand;
use ptah_engine::{ApplyOptions, DatabaseUrl, Dialect, Error as DbError, InspectScope, Session, TlsMode};
use ptah_schema::diff::{ExcludeSet, Finding};
use ptah_schema::read::{Document, Ignored};
use ptah_schema::{Plan, PlanError, PlanOptions, Schema, Severity};
use serde::Serialize;

mod apply;
mod locks;
mod push;
mod rehearse;
mod unmodelled;

use unmodelled::Listing;

use crate::common::{DbArgs, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, Format, Output, parse_duration};

/// `ptah schema …`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The schema command.
    #[command(subcommand)]
    pub command: Sub,
}

/// The schema commands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// The commands that talk to a database.
    #[command(flatten)]
    Database(DatabaseSub),
    /// Publish the desired schema as one canonical schema.hcl artifact: exit 0 pushed, 2 refused.
    Push(push::PushArgs),
}

/// The schema commands that talk to a database.
#[derive(Debug, Subcommand)]
pub enum DatabaseSub {
    /// Print the live schema: canonical schema.hcl (text) or the JSON model. Exit 0.
    Inspect(InspectArgs),
    /// Compare the live schema with the desired one: exit 0 in sync, 1 drift, 2 error.
    Drift(DesiredArgs),
    /// Write the plan that moves the database to the desired schema: exit 0 when the plan is
    /// empty, 1 when changes are pending (the plan file is written either way), 2 error, refusal
    /// or a rehearsal (`--dev-url`) that did not pass.
    Plan(PlanArgs),
    /// Apply a plan file, then verify that a fresh plan is empty: exit 0 applied and verified,
    /// 1 stale plan, failed or unverified apply, 2 error or refused gate.
    Apply(ApplyArgs),
}

/// Database, format and scope, shared by every schema command.
#[derive(Debug, clap::Args)]
pub struct Target {
    #[command(flatten)]
    db: DbArgs,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Leave matching tables and enums out of management (glob over `table` or `schema.table`; repeatable).
    #[arg(long, value_delimiter = ',')]
    exclude: Vec<String>,
}

/// Arguments of `inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    #[command(flatten)]
    target: Target,
}

/// Arguments of commands that compare with a desired schema.
#[derive(Debug, clap::Args)]
pub struct DesiredArgs {
    #[command(flatten)]
    target: Target,
    /// The desired schema: a `.hcl` file, a `.sql` file, or a directory of `.sql` files.
    #[arg(long, visible_alias = "schema-file", env = "PTAH_SCHEMA_FROM")]
    from: PathBuf,
}

/// Arguments of `plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    #[command(flatten)]
    desired: DesiredArgs,
    /// Where to write the plan file (JSON, byte-identical for the same inputs).
    #[arg(long)]
    output: PathBuf,
    /// A table no plan may drop, alter or change rows of (`table` or `schema.table`; repeatable).
    #[arg(long, value_delimiter = ',')]
    protected_table: Vec<String>,
    /// A table of at least this many estimated rows whose writers a statement blocks makes that
    /// statement at least a warning.
    #[arg(long, default_value_t = locks::LOCK_WARNING_ROWS)]
    lock_warning_rows: u64,
    #[command(flatten)]
    dev: rehearse::DevArgs,
}

/// Arguments of `apply`.
#[derive(Debug, clap::Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    desired: DesiredArgs,
    /// The plan file written by `ptah schema plan`.
    #[arg(long)]
    plan: PathBuf,
    /// Allow a plan with destructive statements (otherwise refused with exit 2).
    #[arg(long)]
    allow_destructive: bool,
    /// Check the plan is current and print it; run nothing.
    #[arg(long)]
    dry_run: bool,
    /// How long to wait for the shared lock.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    lock_wait: Duration,
    /// How long one statement may wait for a table lock (0s: no limit).
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    lock_timeout: Duration,
    /// How long one statement may run (0s: no limit).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    statement_timeout: Duration,
    /// MySQL/MariaDB: when the server cannot add a column or change an index online
    /// (`ALGORITHM=INSTANT|INPLACE, LOCK=NONE`), let it copy the table or block its writes instead
    /// of failing.
    #[arg(long, env = "PTAH_ALLOW_TABLE_COPY")]
    allow_table_copy: bool,
}

/// A command's failure: a stable code, a message free of credentials, and the exit code.
#[derive(Debug)]
pub struct Failure {
    code: &'static str,
    message: String,
    exit: u8,
}

impl Failure {
    fn new(code: &'static str, message: impl Into<String>, exit: u8) -> Self {
        Failure {
            code,
            message: message.into(),
            exit,
        }
    }
}

impl From<DbError> for Failure {
    fn from(err: DbError) -> Self {
        let exit = if err.is_failure() {
            EXIT_FAILURE
        } else {
            EXIT_USAGE
        };
        Failure::new(err.code(), err.to_string(), exit)
    }
}

impl From<PlanError> for Failure {
    fn from(err: PlanError) -> Self {
        let code = match err {
            PlanError::ProtectedTable { .. } => "protected_table",
            PlanError::DuplicateRowKey { .. } => "invalid_schema",
            PlanError::GeneratedColumn { .. } => "unsupported_change",
            PlanError::PartitionKeyChanged { .. } => "partition_key_changed",
            PlanError::RenameChangesType { .. } => "unsupported_change",
            // The operator's own code for such a plan, so both layers refuse it alike.
            PlanError::CredentialBearing { .. } => "invalid_plan_output",
        };
        Failure::new(code, err.to_string(), EXIT_USAGE)
    }
}

/// Runs a schema command and returns the exit code.
pub async fn run(args: Args) -> u8 {
    match args.command {
        Sub::Database(command) => run_on_database(command).await,
        Sub::Push(a) => push::push(a).await,
    }
}

async fn run_on_database(command: DatabaseSub) -> u8 {
    let (format, name, url) = match &command {
        DatabaseSub::Inspect(a) => (a.target.format, "schema inspect", &a.target.db.url),
        DatabaseSub::Drift(a) => (a.target.format, "schema drift", &a.target.db.url),
        DatabaseSub::Plan(a) => (a.desired.target.format, "schema plan", &a.desired.target.db.url),
        DatabaseSub::Apply(a) => (a.desired.target.format, "schema apply", &a.desired.target.db.url),
    };
    let out = Output {
        format,
        command: name,
    };
    let scrub = DatabaseUrl::parse(url).ok();
    let result = match command {
        DatabaseSub::Inspect(a) => inspect(a, out).await,
        DatabaseSub::Drift(a) => drift(a, out).await,
        DatabaseSub::Plan(a) => plan(a, out).await,
        DatabaseSub::Apply(a) => apply::apply(a, out).await,
    };
    result.unwrap_or_else(|f| {
        let message = scrub.map_or(f.message.clone(), |u| u.scrub(&f.message));
        out.error(f.code, &message, f.exit)
    })
}

/// Prints a progress line on stderr, only for people: text mode on a terminal.
pub(crate) fn progress(out: Output, line: &str) {
    if out.format == Format::Text && std::io::stderr().is_terminal() {
        eprintln!("{line}");
    }
}

/// The TLS a session used: the URL's mode and the protocol the server reports for the session.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TlsUsed {
    mode: &'static str,
    protocol: Option<String>,
}

/// An open session with its parsed URL and the planner's options for it.
pub(crate) struct Connected {
    pub(crate) url: DatabaseUrl,
    pub(crate) session: Session,
    pub(crate) options: PlanOptions,
    pub(crate) tls: TlsUsed,
}

/// Parses the URL and connects; the options carry the exclusions and the server's flavor.
pub(crate) async fn connect(target: &Target, out: Output) -> Result<Connected, Failure> {
    let url = target.db.database_url()?;
    progress(out, &format!("connecting to {url}"));
    let mut session = Session::connect(&url, target.db.connect_timeout).await?;
    // A plaintext URL was dialled without TLS; only a TLS session needs the server's word.
    let protocol = match url.tls() {
        TlsMode::Disable => None,
        _ => session.tls_protocol().await?,
    };
    if protocol.is_none() && url.tls() != TlsMode::Disable {
        // The driver asked for TLS; a session the server calls plaintext is refused all the same.
        close(session).await;
        return Err(DbError::TlsUnavailable {
            target: url.to_string(),
            mode: url.tls().as_str(),
        }
        .into());
    }
    let tls = TlsUsed {
        mode: url.tls().as_str(),
        protocol,
    };
    let flavor = ptah_engine::mysql_flavor(&mut session).await?;
    let options = PlanOptions {
        exclude: target.exclude.clone(),
        protected_tables: Vec::new(),
        mysql_flavor: flavor.unwrap_or_default(),
    };
    Ok(Connected {
        url,
        session,
        options,
        tls,
    })
}

/// The code of an empty desired schema's refusal.
pub(crate) const EMPTY_SCHEMA: &str = "empty_schema";

/// Why an empty desired schema is refused: nothing would be managed, and on PostgreSQL the
/// management scope (the schemas a document names) would be empty as well, so every plan would
/// say "no changes" whatever the database holds. Dropping everything is never what an empty file
/// means by accident; a person who wants that drops the objects from a document that still names
/// them.
pub(crate) fn empty_schema_message(path: &std::path::Path) -> String {
    format!(
        "{} declares no schema object; an empty desired schema is refused (it would manage nothing \
         and prove nothing)",
        path.display()
    )
}

/// Reads the desired schema in the URL's dialect; refuses a bad URL first.
pub(crate) fn desired(args: &DesiredArgs) -> Result<(Dialect, Schema), Failure> {
    let (dialect, document) = desired_document(args)?;
    Ok((dialect, document.schema))
}

/// [`desired`] with the statements the reader skipped, for the reports that list them.
pub(crate) fn desired_document(args: &DesiredArgs) -> Result<(Dialect, Document), Failure> {
    let dialect = DatabaseUrl::parse(&args.target.db.url)?.dialect();
    let document = ptah_schema::read::document(dialect, &args.from)
        .map_err(|e| Failure::new("invalid_schema", e.to_string(), EXIT_USAGE))?;
    if document.schema.is_empty() {
        return Err(Failure::new(
            EMPTY_SCHEMA,
            empty_schema_message(&args.from),
            EXIT_USAGE,
        ));
    }
    Ok((dialect, document))
}

/// The live side of a comparison.
pub(crate) struct Live {
    /// The live schema within the desired schema's scope.
    pub schema: Schema,
    /// What the database holds that the model does not.
    pub unmodelled: Listing,
}

/// Inspects the live schema within the desired schema's scope, with what it holds unmodelled.
/// The desired schema is compared in the server's spelling afterwards
/// ([`ptah_engine::comparable`]).
pub(crate) async fn live(c: &mut Connected, desired: &Schema, out: Output) -> Result<Live, Failure> {
    progress(out, "inspecting the live schema");
    let live = ptah_engine::inspect(&mut c.session, &InspectScope::of(desired)).await?;
    let not_managed = unmodelled::list(&mut c.session, &live).await?;
    Ok(Live {
        schema: live,
        unmodelled: not_managed,
    })
}

/// Closes a session; a failure to close changes nothing already reported.
pub(crate) async fn close(session: Session) {
    if let Err(err) = session.close().await {
        tracing::debug!(error = %err, "closing the session failed");
    }
}

#[derive(Serialize)]
struct InspectReport {
    dialect: Dialect,
    database_url: String,
    tls: TlsUsed,
    /// Objects of the database the model does not hold (views, routines, triggers…).
    unmodelled: Listing,
    fingerprint: String,
    schema: Schema,
}

async fn inspect(a: InspectArgs, out: Output) -> Result<u8, Failure> {
    let mut c = connect(&a.target, out).await?;
    let result = match ptah_engine::inspect(&mut c.session, &InspectScope::all()).await {
        Ok(live) => unmodelled::list(&mut c.session, &live).await.map(|u| (live, u)),
        Err(err) => Err(err),
    };
    close(c.session).await;
    let (live, not_managed) = result?;
    let schema = ExcludeSet::new(&a.target.exclude).apply(&live).into_owned();
    let dialect = c.url.dialect();
    let report = InspectReport {
        dialect,
        database_url: c.url.to_string(),
        tls: c.tls.clone(),
        fingerprint: schema.fingerprint().to_string(),
        unmodelled: not_managed,
        schema,
    };
    let text = || {
        unmodelled::lines(&report.unmodelled, "#") + &ptah_schema::write::hcl::to_hcl(dialect, &report.schema)
    };
    Ok(out.report(&report, text, EXIT_OK))
}

#[derive(Serialize)]
struct DriftReport {
    drift: bool,
    highest_severity: Option<Severity>,
    dialect: Dialect,
    database_url: String,
    tls: TlsUsed,
    source: String,
    exclude: Vec<String>,
    live_fingerprint: String,
    desired_fingerprint: String,
    findings: Vec<Finding>,
    /// Objects in the managed namespaces the model does not hold; never drift, never touched.
    unmodelled: Listing,
}

async fn drift(a: DesiredArgs, out: Output) -> Result<u8, Failure> {
    let (dialect, desired) = desired(&a)?;
    let mut c = connect(&a.target, out).await?;
    let compared = match live(&mut c, &desired, out).await {
        Ok(live) => ptah_engine::comparable(&mut c.session, &desired, &live.schema)
            .await
            .map(|comparable| (live, comparable))
            .map_err(Failure::from),
        Err(err) => Err(err),
    };
    close(c.session).await;
    let (
        Live {
            schema: live,
            unmodelled: not_managed,
        },
        comparable,
    ) = compared?;
    let found = ptah_schema::drift(&comparable, &live, dialect, &c.options);
    let scope = ExcludeSet::new(&c.options.exclude);
    let report = DriftReport {
        drift: !found.diff.is_empty(),
        highest_severity: found.findings.iter().map(|f| f.severity).max(),
        dialect,
        database_url: c.url.to_string(),
        tls: c.tls.clone(),
        source: a.from.display().to_string(),
        exclude: c.options.exclude.clone(),
        live_fingerprint: scope.apply(&live).fingerprint().to_string(),
        desired_fingerprint: scope.apply(&desired).fingerprint().to_string(),
        findings: found.findings,
        unmodelled: not_managed,
    };
    let exit = if report.drift { EXIT_FAILURE } else { EXIT_OK };
    let text = || {
        let mut s = String::new();
        if !report.drift {
            s.push_str("No drift: the database matches the desired schema.\n");
        }
        for f in &report.findings {
            let severity = severity_name(f.severity);
            let _ = writeln!(s, "{:<24} {:>5}  {severity}", f.category.as_str(), f.count);
        }
        s
    };
    Ok(out.report(&report, text, exit))
}

/// The lowercase name of a severity, as in JSON.
pub(crate) fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Safe => "safe",
        Severity::Warning => "warning",
        Severity::Destructive => "destructive",
    }
}

#[derive(Serialize)]
struct PlanReport {
    changes_pending: bool,
    output: String,
    dialect: Dialect,
    database_url: String,
    tls: TlsUsed,
    from_fingerprint: String,
    to_fingerprint: String,
    destructive: bool,
    highest_severity: Option<Severity>,
    statements: usize,
    severities: Vec<Severity>,
    /// Statements of the desired document skipped by rule (session settings, ownership…).
    ignored: Vec<Ignored>,
    /// Objects in the managed namespaces the model does not hold; the plan never touches them.
    unmodelled: Listing,
    /// The plan's rehearsal on the dev database (`--dev-url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    rehearsal: Option<ptah_engine::Rehearsal>,
    /// Declared renames the plan does not act on (already done, or both names exist).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    renames_ignored: Vec<ptah_schema::diff::RenameIgnored>,
}

/// The bytes of a plan file: pretty JSON and a final newline, identical for identical plans.
pub fn plan_bytes(plan: &Plan) -> Result<Vec<u8>, Failure> {
    let mut bytes = serde_json::to_vec_pretty(plan)
        .map_err(|e| Failure::new("internal", format!("cannot render the plan: {e}"), EXIT_FAILURE))?;
    bytes.push(b'\n');
    Ok(bytes)
}

async fn plan(a: PlanArgs, out: Output) -> Result<u8, Failure> {
    let (
        dialect,
        Document {
            schema: desired,
            ignored,
        },
    ) = desired_document(&a.desired)?;
    // The plan names the document it was computed for, whatever text the server printed for it;
    // that hash needs no database, so it is taken while the database is read. The schema itself
    // then goes to the probes by value, so that the server's spelling replaces the hand-written
    // one in place instead of in a whole copy.
    let desired = Arc::new(desired);
    let document = {
        let (desired, exclude) = (desired.clone(), a.desired.target.exclude.clone());
        tokio::task::spawn_blocking(move || ExcludeSet::new(&exclude).apply(&desired).fingerprint())
    };
    let mut c = connect(&a.desired.target, out).await?;
    let live = live(&mut c, &desired, out).await;
    let mut options = c.options.clone();
    options.protected_tables = a.protected_table.clone();
    // The blocking task fails only when the runtime shuts down or the hash panicked: hash here.
    let to_fingerprint = match document.await {
        Ok(fingerprint) => fingerprint,
        Err(_) => ExcludeSet::new(&options.exclude).apply(&desired).fingerprint(),
    };
    let compared = match live {
        Ok(live) => {
            // The hashing task has ended, so the schema has one owner again.
            let desired = Arc::try_unwrap(desired).unwrap_or_else(|shared| (*shared).clone());
            ptah_engine::into_comparable(&mut c.session, Cow::Owned(desired), &live.schema)
                .await
                .map(|desired| (live, desired))
                .map_err(Failure::from)
        }
        Err(err) => Err(err),
    };
    let sizes = match &compared {
        Ok(_) => ptah_engine::estimated_rows(&mut c.session)
            .await
            .map_err(Failure::from),
        Err(_) => Ok(Default::default()),
    };
    close(c.session).await;
    let (
        Live {
            schema: live,
            unmodelled: not_managed,
        },
        desired,
    ) = compared?;
    let sizes = sizes?;
    progress(out, "planning");
    let mut plan = ptah_schema::plan_for(to_fingerprint, &desired, &live, dialect, &options)?;
    let renames_ignored = ptah_schema::diff::ignored_renames(&desired, &live);
    locks::annotate(&mut plan, &live, &sizes, a.lock_warning_rows);
    std::fs::write(&a.output, plan_bytes(&plan)?)
        .map_err(|e| Failure::new("io", format!("{}: {e}", a.output.display()), EXIT_USAGE))?;
    let rehearsal = match a.dev.dev_url.is_some() && !plan.is_empty() {
        true => Some(rehearse::run(&a.dev, &live, &desired, &plan, &options, out).await?),
        false => None,
    };
    let report = PlanReport {
        changes_pending: !plan.is_empty(),
        output: a.output.display().to_string(),
        dialect,
        database_url: c.url.to_string(),
        tls: c.tls.clone(),
        from_fingerprint: plan.from_fingerprint.to_string(),
        to_fingerprint: plan.to_fingerprint.to_string(),
        destructive: plan.destructive,
        highest_severity: plan.highest_severity(),
        statements: plan.statements.len(),
        severities: plan.statements.iter().map(|s| s.severity).collect(),
        ignored,
        unmodelled: not_managed,
        rehearsal,
        renames_ignored,
    };
    let exit = match &report.rehearsal {
        Some(r) if r.outcome != ptah_engine::RehearsalOutcome::Passed => EXIT_USAGE,
        _ if plan.is_empty() => EXIT_OK,
        _ => EXIT_FAILURE,
    };
    let text = || {
        let mut s = String::new();
        for skipped in &report.ignored {
            let _ = writeln!(s, "-- {skipped}");
        }
        s.push_str(&unmodelled::lines(&report.unmodelled, "--"));
        for r in &report.renames_ignored {
            let _ = writeln!(
                s,
                "-- notice: the rename of {} is ignored: {}",
                r.object, r.reason
            );
        }
        if plan.is_empty() {
            s.push_str("Schema is synced: the plan is empty.\n");
        }
        for st in &plan.statements {
            let _ = writeln!(s, "-- {}: {}\n{};", severity_name(st.severity), st.reason, st.sql);
        }
        let _ = writeln!(s, "Wrote {} ({} statements)", report.output, report.statements);
        if let Some(r) = &report.rehearsal {
            s.push_str(&rehearse::text(r));
        }
        s
    };
    Ok(out.report(&report, text, exit))
}

/// Options for the engine's apply from the command line and the desired schema.
pub(crate) fn apply_options(a: &ApplyArgs, desired: &Schema) -> ApplyOptions {
    ApplyOptions {
        lock_wait: a.lock_wait,
        lock_timeout: a.lock_timeout,
        statement_timeout: a.statement_timeout,
        scope: InspectScope::of(desired),
        allow_table_copy: a.allow_table_copy,
    }
}

/// "N of M statements committed", for people.
pub(crate) fn committed_text(applied: usize, total: usize) -> String {
    format!("{applied} of {total} statements committed")
}
