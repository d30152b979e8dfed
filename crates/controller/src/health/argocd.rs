//! The Argo CD health scripts of `docs/integrations/argocd/`, run in a Lua 5.1 (Argo CD runs them
//! in gopher-lua, a 5.1) with the libraries Argo CD offers, over the objects of every situation.
//! A line hook records which lines ran, so a branch no case reaches fails the test.

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
};

use mlua::{HookTriggers, Lua, LuaOptions, LuaSerdeExt, StdLib, Table, VmState, serde::SerializeOptions};
use serde_json::Value;

use super::{Case, Situation, cases, condition};

const SCHEMA: &str = include_str!("../../../../docs/integrations/argocd/ptahschema.lua");
const MIGRATION: &str = include_str!("../../../../docs/integrations/argocd/ptahmigration.lua");

fn script(kind: &str) -> &'static str {
    match kind {
        "PtahSchema" => SCHEMA,
        "PtahMigration" => MIGRATION,
        other => panic!("no health script for {other}"),
    }
}

/// Argo CD's verdict: `hs.status` and `hs.message`.
#[derive(Debug)]
struct Health {
    status: String,
    message: String,
}

/// Runs `script` on `object` as Argo CD does (the object as the global `obj`, the returned table
/// read), adding the lines that ran to `lines`.
fn run(script: &str, object: &Value, lines: &Arc<Mutex<BTreeSet<usize>>>) -> Health {
    let lua = Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH,
        LuaOptions::default(),
    )
    .expect("a Lua state");
    // JSON null is absent (nil) in Argo CD's conversion of the object, never a sentinel value.
    let options = SerializeOptions::new()
        .serialize_none_to_null(false)
        .serialize_unit_to_null(false);
    let obj = lua.to_value_with(object, options).expect("the object converts");
    lua.globals().set("obj", obj).expect("obj set");
    let seen = Arc::clone(lines);
    lua.set_hook(HookTriggers::EVERY_LINE, move |_, debug| {
        if let Some(line) = debug.current_line() {
            seen.lock().expect("lines").insert(line);
        }
        Ok(VmState::Continue)
    })
    .expect("hook");
    let hs: Table = lua.load(script).eval().expect("the script returns a table");
    Health {
        status: hs.get("status").expect("hs.status"),
        message: hs.get("message").expect("hs.message"),
    }
}

fn expected(situation: Situation) -> &'static str {
    match situation {
        Situation::InSync | Situation::Rechecking => "Healthy",
        Situation::AwaitingApproval | Situation::Suspended => "Suspended",
        Situation::Blocked | Situation::Failed => "Degraded",
        Situation::InProgress | Situation::SpecChanged | Situation::Replanning => "Progressing",
    }
}

/// What the message must carry to be of use to a person.
fn expected_message(case: &Case) -> String {
    let reason = |type_: &str| {
        condition(&case.object, type_)
            .and_then(|c| c["reason"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    match case.situation {
        Situation::AwaitingApproval => "AwaitingApproval: ".to_owned(),
        Situation::Blocked | Situation::Failed => reason("Ready"),
        Situation::InSync => reason("Ready"),
        Situation::Suspended => "spec.suspend".to_owned(),
        Situation::SpecChanged => "has not taken up generation 2".to_owned(),
        Situation::Rechecking => "re-checking (Resolving)".to_owned(),
        Situation::InProgress | Situation::Replanning => format!("Resolving: {}", reason("Reconciling")),
    }
}

/// Lines with a `return`: each branch of the scripts ends in one.
fn returns(script: &str) -> BTreeSet<usize> {
    script
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("return"))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn argo_cd_reads_each_situation_and_every_branch_is_taken() {
    for kind in ["PtahSchema", "PtahMigration"] {
        let lines = Arc::new(Mutex::new(BTreeSet::new()));
        let all = cases();
        let ours: Vec<&Case> = all.iter().filter(|c| c.kind == kind).collect();
        for case in &ours {
            let what = format!("{kind} {:?}", case.situation);
            let health = run(script(kind), &case.object, &lines);
            assert_eq!(
                health.status,
                expected(case.situation),
                "{what}: {}",
                health.message
            );
            let needle = expected_message(case);
            assert!(!needle.is_empty(), "{what}: nothing to look for");
            assert!(
                health.message.contains(&needle),
                "{what}: {:?} lacks {needle:?}",
                health.message
            );
        }
        let fresh = ours
            .iter()
            .find(|c| c.situation == Situation::InProgress)
            .expect("an in-progress case");

        // Just applied: the manager has written nothing yet.
        let mut unwritten = fresh.object.clone();
        unwritten.as_object_mut().expect("an object").remove("status");
        let health = run(script(kind), &unwritten, &lines);
        assert_eq!(health.status, "Progressing");
        assert!(
            health.message.contains("waiting for the manager"),
            "{}",
            health.message
        );

        // Written by a manager from before `Reconciling` existed (an upgrade in progress).
        let mut older = fresh.object.clone();
        older["status"]["conditions"]
            .as_array_mut()
            .expect("conditions")
            .retain(|c| c["type"] != "Reconciling");
        let health = run(script(kind), &older, &lines);
        assert_eq!(health.status, "Progressing");
        assert_eq!(health.message, "Resolving: work in progress");

        let ran = lines.lock().expect("lines").clone();
        let missed: Vec<usize> = returns(script(kind)).difference(&ran).copied().collect();
        assert!(
            missed.is_empty(),
            "{kind}: no case reaches the returns at lines {missed:?}"
        );
    }
}

#[test]
fn the_scripts_differ_only_in_wording() {
    let schema: Vec<&str> = SCHEMA.lines().collect();
    let migration: Vec<&str> = MIGRATION.lines().collect();
    assert_eq!(schema.len(), migration.len());
    let differing = schema.iter().zip(&migration).filter(|(a, b)| a != b).count();
    // The header, two fallback messages and the comment naming the busy phases.
    assert!(
        differing <= 5,
        "{differing} lines differ: keep the two checks in step"
    );
    assert_eq!(returns(SCHEMA), returns(MIGRATION));
}
