//! A Plan's rehearsal in the payload: it rides with a plan only, is bounded, and survives the
//! frame both ways.

mod common;

use common::{frame, plan_payload};
use ptah_dataplane::{
    ErrorCode, InvariantViolation, MAX_REHEARSAL_TIMINGS, Operation, RehearsalOutcome, RehearsalResult,
    ResultError, ResultPayload, parse_last_frame,
};

fn failed_at(statement: u64) -> RehearsalResult {
    RehearsalResult {
        outcome: RehearsalOutcome::Failed,
        statement_millis: vec![3, 12],
        failed_statement: Some(statement),
        reason: Some("statement 2 of 2: type \"no_such_type\" does not exist".to_owned()),
        restored: true,
    }
}

#[test]
fn a_rehearsal_travels_with_its_plan_in_the_frame() {
    let mut p = plan_payload("CREATE TABLE t (id int);\n");
    p.rehearsal = Some(failed_at(2));
    assert_eq!(p.validate(), Ok(()));
    let parsed = parse_last_frame(&frame(&p)).expect("parsed");
    assert_eq!(parsed.payload.rehearsal, Some(failed_at(2)));
    assert!(!failed_at(2).passed());
    let json = serde_json::to_value(&p).expect("json");
    assert_eq!(json["rehearsal"]["outcome"], "failed");
    assert_eq!(json["rehearsal"]["failedStatement"], 2);
}

#[test]
fn a_rehearsal_without_a_plan_or_out_of_bounds_is_refused() {
    // A failed Plan reports no plan, so no rehearsal either.
    let mut failed = ResultPayload::new(Operation::Plan, None);
    failed.error = Some(ResultError {
        code: ErrorCode::ChildFailed,
        child_code: None,
        message: "the plan failed".to_owned(),
    });
    assert_eq!(failed.validate(), Ok(()));
    failed.rehearsal = Some(failed_at(1));
    assert_eq!(failed.validate(), Err(InvariantViolation::ForeignSection));

    let mut p = plan_payload("CREATE TABLE t (id int);\n");
    let mut long = failed_at(1);
    long.statement_millis = vec![1; MAX_REHEARSAL_TIMINGS + 1];
    p.rehearsal = Some(long);
    assert_eq!(p.validate(), Err(InvariantViolation::OutOfBounds("rehearsal")));
    let mut two_lines = failed_at(1);
    two_lines.reason = Some("first\nsecond".to_owned());
    p.rehearsal = Some(two_lines);
    assert_eq!(p.validate(), Err(InvariantViolation::OutOfBounds("rehearsal")));
}
