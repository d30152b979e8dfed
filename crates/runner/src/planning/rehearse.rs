//! The rehearsal of a confirmed plan on the dev database (`PTAH_DEV_URL`, issue 37): one more
//! `ptah schema plan`, the only child that gets the dev URL, with `--dev-url` read from it. Its
//! plan must be the bytes already confirmed; its report's `rehearsal` becomes the payload's.
//!
//! A rehearsal that could not run (the dev database unreachable, of another engine, holding
//! objects in scope) is reported as inconclusive with the reason, not as the Plan's failure: the
//! plan is still the database's truth, and the manager decides what an unrehearsed plan may do.

use std::path::Path;

use ptah_dataplane::{
    MAX_ERROR_MESSAGE_BYTES, MAX_REHEARSAL_TIMINGS, RehearsalOutcome, RehearsalResult, env,
};
use serde_json::Value;

use crate::{
    command::{self, ChildCommand},
    error::RunnerError,
    inputs::Env,
    redact::Redactor,
    report,
    supervise::ChildRun,
};

/// Whether the Plan has a dev database to rehearse on.
pub(super) fn wanted(env: &Env) -> bool {
    env.get(env::DEV_URL).is_some_and(|u| !u.is_empty())
}

/// The rehearsal run: the Plan's command writing to `output`, with the dev database's URL and,
/// when the target names a CA, that CA for the dev database too.
pub(super) fn command(env: &Env, output: &Path) -> Result<ChildCommand, RunnerError> {
    let files = command::Files {
        plan_output: output,
        approved_plan: None,
        approved_sequence: None,
    };
    let mut cmd = command::build(ptah_dataplane::Operation::Plan, env, &files)?;
    let url = env
        .get(env::DEV_URL)
        .ok_or_else(|| RunnerError::input(env::DEV_URL, "is not set"))?;
    cmd.env.push((env::DEV_URL.to_owned(), url.to_owned()));
    if let Some(ca) = env.get(env::DB_CA_FILE) {
        cmd.args.push(format!("--dev-ca-file={ca}"));
    }
    Ok(cmd)
}

/// What the rehearsal run says about the plan whose bytes are `reported`.
pub(super) fn read(run: &ChildRun, output: &Path, reported: &str, redactor: &Redactor) -> RehearsalResult {
    let Some(report) = report::json_report(run) else {
        return inconclusive(&format!(
            "the rehearsal run exited with {} without a JSON report",
            run.exit_code
        ));
    };
    if let Some((code, message)) = report::child_error(&report) {
        let why = format!(
            "the dev database could not be used ({}): {}",
            code.unwrap_or("error"),
            message.unwrap_or("no message")
        );
        return inconclusive(&one_line(&why, redactor));
    }
    let same = std::fs::read(output).is_ok_and(|bytes| bytes == reported.as_bytes());
    if !same {
        return inconclusive("the rehearsal run planned other bytes than the reported plan");
    }
    match report.get("rehearsal") {
        Some(r) => of_report(r, redactor),
        None => inconclusive("the rehearsal run reported no rehearsal"),
    }
}

fn of_report(r: &Value, redactor: &Redactor) -> RehearsalResult {
    let outcome = match r.get("outcome").and_then(Value::as_str) {
        Some("passed") => RehearsalOutcome::Passed,
        Some("failed") => RehearsalOutcome::Failed,
        Some("inconclusive") => RehearsalOutcome::Inconclusive,
        _ => return inconclusive("the rehearsal report has no known outcome"),
    };
    // They ran in an Apply's order; they are reported in the plan's.
    let mut timed: Vec<(u64, u64)> = r
        .get("statements")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|s| Some((s.get("index")?.as_u64()?, s.get("millis")?.as_u64()?)))
                .collect()
        })
        .unwrap_or_default();
    timed.sort_unstable();
    let statement_millis = timed
        .into_iter()
        .take(MAX_REHEARSAL_TIMINGS)
        .map(|(_, millis)| millis)
        .collect();
    RehearsalResult {
        outcome,
        statement_millis,
        failed_statement: r
            .get("failed_statement_index")
            .and_then(Value::as_u64)
            .map(|i| i.saturating_add(1)),
        reason: r
            .get("reason")
            .and_then(Value::as_str)
            .map(|why| one_line(why, redactor)),
        restored: r.get("restored").and_then(Value::as_bool).unwrap_or(false),
    }
}

fn inconclusive(why: &str) -> RehearsalResult {
    RehearsalResult {
        outcome: RehearsalOutcome::Inconclusive,
        statement_millis: Vec::new(),
        failed_statement: None,
        reason: Some(why.to_owned()),
        restored: true,
    }
}

/// `text` redacted, on one line, within the payload's bound.
fn one_line(text: &str, redactor: &Redactor) -> String {
    let line = redactor
        .redact_str(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    report::bounded(line, MAX_ERROR_MESSAGE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env(pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect())
    }

    #[test]
    fn only_the_rehearsal_run_gets_the_dev_url_and_the_targets_ca() {
        let e = env(&[
            (env::DB_URL, "postgres://u:p@h/d"),
            (env::DEV_URL, "postgres://u:dev-secret@h/dev"),
            (env::DB_CA_FILE, "/etc/ptah/db-ca/ca.pem"),
            (env::SCHEMA_FROM, "/schema"),
        ]);
        assert!(wanted(&e));
        let cmd = command(&e, Path::new("/w/plan-rehearsed.json")).expect("command");
        assert!(cmd.args.contains(&"--output=/w/plan-rehearsed.json".to_owned()));
        assert!(
            cmd.args
                .contains(&"--dev-ca-file=/etc/ptah/db-ca/ca.pem".to_owned())
        );
        assert!(
            !cmd.args.iter().any(|a| a.contains("dev-secret")),
            "never on the command line"
        );
        assert!(cmd.env.iter().any(|(k, _)| k == env::DEV_URL));
        let plan_run = command::build(
            ptah_dataplane::Operation::Plan,
            &e,
            &command::Files {
                plan_output: Path::new("/w/plan-1.json"),
                approved_plan: None,
                approved_sequence: None,
            },
        )
        .expect("plan run");
        assert!(!plan_run.env.iter().any(|(k, _)| k == env::DEV_URL));
        assert!(!wanted(&env(&[(env::DEV_URL, "")])));
    }

    #[test]
    fn a_failed_rehearsal_names_its_statement_one_based_and_loses_its_secrets() {
        let mut redactor = Redactor::new();
        redactor.add_secret("dev-secret");
        let report = serde_json::json!({
            "outcome": "failed",
            "statements": [{"index": 1, "millis": 9}, {"index": 0, "millis": 4}],
            "failed_statement_index": 1,
            "reason": "statement 2 of 2 failed:\nno_such_type at dev-secret",
            "restored": true
        });
        let r = of_report(&report, &redactor);
        assert_eq!(r.outcome, RehearsalOutcome::Failed);
        assert_eq!(r.failed_statement, Some(2));
        assert_eq!(r.statement_millis, [4, 9]);
        let reason = r.reason.expect("reason");
        assert!(
            !reason.contains("dev-secret") && !reason.contains('\n'),
            "{reason}"
        );
        assert_eq!(
            of_report(&serde_json::json!({"outcome": "maybe"}), &redactor).outcome,
            RehearsalOutcome::Inconclusive
        );
    }
}
