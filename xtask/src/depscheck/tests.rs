//! The evaluator against small hand-made `cargo metadata` documents, and the real check on this workspace.
//!
//! `depscheck-clean.json` obeys every rule while sitting next to each trap (a dev-dependency on a
//! driver, a build-dependency on one, aws-lc-rs behind a dev edge); the mutation tests flip one edge of
//! it and expect exactly the finding that edge causes, so the clean verdict is not vacuous.

use cargo_metadata::{Metadata, MetadataCommand};
use serde_json::{Value, json};

use super::evaluate::{Checked, Report, evaluate};
use super::rules::RULES;

const CLEAN: &str = include_str!("../../tests/fixtures/depscheck-clean.json");
const VIOLATIONS: &str = include_str!("../../tests/fixtures/depscheck-violations.json");

fn report_of(doc: &Value) -> Report {
    let metadata: Metadata = MetadataCommand::parse(doc.to_string()).expect("fixture is cargo metadata");
    evaluate(&metadata, RULES).expect("fixture has a resolve graph")
}

fn fixture(text: &str) -> Value {
    serde_json::from_str(text).expect("fixture is JSON")
}

fn checked<'r>(report: &'r Report, package: &str) -> &'r Checked {
    report
        .checked
        .iter()
        .find(|c| c.package == package)
        .unwrap_or_else(|| panic!("{package} was not checked"))
}

/// Every violation as `package: a -> b -> c`, sorted, so one assertion shows the whole verdict.
fn paths(report: &Report) -> Vec<String> {
    let mut all: Vec<String> = report.violations().map(|v| v.path.join(" -> ")).collect();
    all.sort();
    all
}

fn node_mut<'d>(doc: &'d mut Value, package: &str) -> &'d mut Value {
    let marker = format!("#{package}@");
    doc["resolve"]["nodes"]
        .as_array_mut()
        .expect("nodes")
        .iter_mut()
        .find(|n| n["id"].as_str().is_some_and(|id| id.contains(&marker)))
        .unwrap_or_else(|| panic!("no node for {package}"))
}

fn id_of(doc: &Value, package: &str) -> String {
    let marker = format!("#{package}@");
    doc["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| p["id"].as_str())
        .find(|id| id.contains(&marker))
        .unwrap_or_else(|| panic!("no package {package}"))
        .to_owned()
}

/// Turns the edge `from -> to` into a normal dependency, as if someone moved it to `[dependencies]`.
fn make_normal(doc: &mut Value, from: &str, to: &str) {
    let to_id = id_of(doc, to);
    let node = node_mut(doc, from);
    let dep = node["deps"]
        .as_array_mut()
        .expect("deps")
        .iter_mut()
        .find(|d| d["pkg"] == to_id.as_str())
        .unwrap_or_else(|| panic!("no edge {from} -> {to}"));
    dep["dep_kinds"] = json!([{ "kind": null, "target": null }]);
}

fn add_normal_edge(doc: &mut Value, from: &str, to: &str) {
    let to_id = id_of(doc, to);
    let node = node_mut(doc, from);
    node["dependencies"]
        .as_array_mut()
        .expect("dependencies")
        .push(json!(to_id));
    node["deps"].as_array_mut().expect("deps").push(json!({
        "name": to.replace('-', "_"),
        "pkg": to_id,
        "dep_kinds": [{ "kind": null, "target": null }],
    }));
}

#[test]
fn clean_graph_has_no_violations_and_checks_every_member() {
    let report = report_of(&fixture(CLEAN));
    assert_eq!(paths(&report), Vec::<String>::new());
    let names: Vec<&str> = report.checked.iter().map(|c| c.package.as_str()).collect();
    assert_eq!(
        names,
        [
            "ptah-cli",
            "ptah-controller",
            "ptah-dataplane",
            "ptah-engine-postgres",
            "ptah-fingerprint",
            "ptah-manager",
            "ptah-runner",
            "ptah-schema",
        ]
    );
    assert_eq!(checked(&report, "ptah-manager").bins, ["manager"]);
}

#[test]
fn dev_dependency_on_a_driver_is_not_a_violation_but_a_normal_one_is() {
    let mut doc = fixture(CLEAN);
    // Its dev edge to tokio-postgres is in the graph, yet fingerprint's closure stays small.
    assert_eq!(checked(&report_of(&doc), "ptah-fingerprint").closure_size, 1);

    make_normal(&mut doc, "ptah-fingerprint", "tokio-postgres");
    let report = report_of(&doc);
    assert_eq!(paths(&report), ["ptah-fingerprint -> tokio-postgres"]);
    let v = report.violations().next().expect("one violation");
    assert_eq!(v.forbidden, "database driver");
    assert_eq!(v.offender(), "tokio-postgres");
}

#[test]
fn build_dependency_on_a_driver_is_not_a_violation_but_a_normal_one_is() {
    let mut doc = fixture(CLEAN);
    assert!(checked(&report_of(&doc), "ptah-schema").violations.is_empty());

    make_normal(&mut doc, "ptah-schema", "postgres");
    // postgres pulls tokio-postgres in, but the driver entered at postgres: one finding per way in.
    // The engine and the executor CLI also reach it through ptah-schema, and may.
    assert_eq!(paths(&report_of(&doc)), ["ptah-schema -> postgres"]);
}

#[test]
fn manager_reaching_a_driver_through_a_library_is_reported_with_its_path() {
    let mut doc = fixture(CLEAN);
    add_normal_edge(&mut doc, "ptah-controller", "ptah-engine-postgres");
    let report = report_of(&doc);
    // Two findings per package: the engine crate itself, and the driver behind it.
    assert_eq!(
        paths(&report),
        [
            "ptah-controller -> ptah-engine-postgres",
            "ptah-controller -> ptah-engine-postgres -> tokio-postgres",
            "ptah-manager -> ptah-controller -> ptah-engine-postgres",
            "ptah-manager -> ptah-controller -> ptah-engine-postgres -> tokio-postgres",
        ]
    );
}

/// Drops the edge `from -> to`, as if a feature flag turned that dependency off.
fn remove_edge(doc: &mut Value, from: &str, to: &str) {
    let to_id = id_of(doc, to);
    let node = node_mut(doc, from);
    node["dependencies"]
        .as_array_mut()
        .expect("dependencies")
        .retain(|d| *d != to_id.as_str());
    node["deps"]
        .as_array_mut()
        .expect("deps")
        .retain(|d| d["pkg"] != to_id.as_str());
}

#[test]
fn an_engine_crate_is_refused_on_the_manager_side_even_without_its_driver() {
    let mut doc = fixture(CLEAN);
    // An engine whose driver sits behind a disabled feature still holds the code that drives one.
    remove_edge(&mut doc, "ptah-engine-postgres", "tokio-postgres");
    add_normal_edge(&mut doc, "ptah-controller", "ptah-engine-postgres");
    let report = report_of(&doc);
    assert_eq!(
        paths(&report),
        [
            "ptah-controller -> ptah-engine-postgres",
            "ptah-manager -> ptah-controller -> ptah-engine-postgres",
        ]
    );
    assert!(
        report
            .violations()
            .all(|v| v.forbidden == "database crate of this workspace")
    );
}

#[test]
fn a_pure_crate_reaching_an_engine_is_refused() {
    let mut doc = fixture(CLEAN);
    remove_edge(&mut doc, "ptah-engine-postgres", "tokio-postgres");
    add_normal_edge(&mut doc, "ptah-dataplane", "ptah-engine-postgres");
    let report = report_of(&doc);
    // The runner is a pure crate too; the CLI (which links engines by design) is not refused.
    assert_eq!(
        paths(&report),
        [
            "ptah-controller -> ptah-dataplane -> ptah-engine-postgres",
            "ptah-dataplane -> ptah-engine-postgres",
            "ptah-manager -> ptah-controller -> ptah-dataplane -> ptah-engine-postgres",
            "ptah-runner -> ptah-dataplane -> ptah-engine-postgres",
        ]
    );
}

#[test]
fn aws_lc_anywhere_in_a_shipped_closure_is_a_violation() {
    let mut doc = fixture(CLEAN);
    // aws-lc-rs is already in the graph behind ptah-cli's dev edge, which is allowed.
    assert!(checked(&report_of(&doc), "ptah-cli").violations.is_empty());

    // Feature unification turning on rustls' aws-lc backend reaches every crate that uses rustls.
    add_normal_edge(&mut doc, "rustls", "aws-lc-rs");
    let report = report_of(&doc);
    assert_eq!(
        paths(&report),
        [
            "ptah-controller -> kube -> kube-client -> rustls -> aws-lc-rs",
            "ptah-manager -> ptah-controller -> kube -> kube-client -> rustls -> aws-lc-rs",
            "ptah-runner -> rustls -> aws-lc-rs",
        ]
    );
    assert!(report.violations().all(|v| v.forbidden == "second TLS stack"));
}

#[test]
fn runner_reaching_kube_is_reported_once_though_two_rules_forbid_it() {
    let mut doc = fixture(CLEAN);
    add_normal_edge(&mut doc, "ptah-dataplane", "k8s-openapi");
    let report = report_of(&doc);
    // ptah-runner is both the `ptah-runner` binary and a pure crate.
    assert_eq!(checked(&report, "ptah-runner").violations.len(), 1);
    assert_eq!(
        paths(&report),
        [
            "ptah-dataplane -> k8s-openapi",
            "ptah-runner -> ptah-dataplane -> k8s-openapi"
        ]
    );
}

#[test]
fn violations_fixture_reports_each_boundary_crossing_with_its_path() {
    let report = report_of(&fixture(VIOLATIONS));
    assert_eq!(
        paths(&report),
        [
            "ptah-artifact -> oci-client -> aws-lc-rs",
            "ptah-cli -> kube",
            "ptah-controller -> db-pool -> tokio-postgres",
            "ptah-manager -> ptah-controller -> db-pool -> tokio-postgres",
        ]
    );
    // Dev-dependency on tokio-postgres: checked, clean.
    assert!(checked(&report, "ptah-fingerprint").violations.is_empty());
    let manager = checked(&report, "ptah-manager");
    // controller, serde, kube, db-pool, kube-client, k8s-openapi, tokio-postgres, rustls,
    // postgres-protocol, ring.
    assert_eq!(manager.closure_size, 10);
    assert_eq!(manager.violations[0].forbidden, "database driver");
    assert_eq!(
        checked(&report, "ptah-cli").violations[0].forbidden,
        "kubernetes client"
    );
}

#[test]
fn rules_without_a_package_yet_are_listed_as_absent_not_failed() {
    let report = report_of(&fixture(VIOLATIONS));
    for subject in ["bin ptah-runner", "ptah-policy", "ptah-engine*", "ptah-migrate"] {
        assert!(
            report.absent.iter().any(|a| a == subject),
            "{subject} missing from {:?}",
            report.absent
        );
    }
    for present in [
        "bin manager",
        "bin ptah",
        "ptah-fingerprint",
        "ptah-artifact",
        "ptah-controller",
    ] {
        assert!(
            !report.absent.iter().any(|a| a == present),
            "{present} is present"
        );
    }
}

#[test]
fn render_shows_one_line_per_package_and_the_offending_path() {
    let text = super::render(&report_of(&fixture(VIOLATIONS)));
    let line = |package: &str| {
        text.lines()
            .find(|l| l.starts_with(package))
            .unwrap_or_else(|| panic!("no line for {package} in\n{text}"))
    };
    assert!(line("ptah-fingerprint").ends_with("closure    1  ok"), "{text}");
    assert!(
        line("ptah-manager [bin manager]").ends_with("closure   10  1 violation(s)"),
        "{text}"
    );
    assert!(
        text.contains(
            "database driver tokio-postgres: ptah-manager -> ptah-controller -> db-pool -> tokio-postgres"
        ),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("not present yet: ") && l.contains("bin ptah-runner")),
        "{text}"
    );
}

#[test]
fn this_workspace_passes() {
    let metadata = super::workspace_metadata(false).expect("cargo metadata runs on this workspace");
    let report = evaluate(&metadata, RULES).expect("workspace resolves");
    assert_eq!(paths(&report), Vec::<String>::new());
    // The check saw the real workspace, not an empty one.
    for package in ["xtask", "ptah-fingerprint"] {
        assert!(
            report.checked.iter().any(|c| c.package == package),
            "{package} was not checked"
        );
    }
    assert!(checked(&report, "xtask").closure_size > 0);
}
