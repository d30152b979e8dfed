//! `support/e2e-suites.json`: the suites, their phases, what they need and which path runs them.
//!
//! Fields of a suite: `name`, `phases` (each implemented by the tests named `e2e_<phase>_…`),
//! `needs` (what the cluster must provide: `full-tier`, `isolation-worker`), `prepare` (phases
//! that run only to set up another; they must pass but are not coverage), `engines` (the
//! database families its cells are split by; none means one engine-independent cell) and `ci`
//! (`default`: the default CI runs it on the default minor; `matrix`: only `--matrix` does).

use std::{fs, path::Path};

use anyhow::{Context, bail};
use serde_json::Value;

/// The suites file under the workspace root.
pub const SUITES_FILE: &str = "support/e2e-suites.json";

/// A database family a cell is split by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Engine {
    /// A suite that talks to no database, or to several in one test.
    Any,
    /// PostgreSQL.
    Postgresql,
    /// MySQL; MariaDB stands in for it on the local provider.
    Mysql,
}

impl Engine {
    /// The name in file names and in `engines`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Any => "any",
            Engine::Postgresql => "postgresql",
            Engine::Mysql => "mysql",
        }
    }

    fn parse(name: &str) -> anyhow::Result<Self> {
        match name {
            "postgresql" => Ok(Engine::Postgresql),
            "mysql" => Ok(Engine::Mysql),
            other => bail!("unknown engine {other:?} (known: postgresql, mysql)"),
        }
    }

    /// The nextest filter that picks this engine's tests of a phase shared by several engines
    /// (their names say `postgresql`, or `mysql`/`mariadb`).
    pub fn filter(self) -> Option<&'static str> {
        match self {
            Engine::Any => None,
            Engine::Postgresql => Some("test(/postgresql/)"),
            Engine::Mysql => Some("test(/mysql|mariadb/)"),
        }
    }
}

/// Which CI path runs a suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CiPath {
    /// `cargo xtask test` (and so `.ci/run`) on the default minor.
    Default,
    /// Only `cargo xtask e2e --matrix`.
    Matrix,
}

/// One suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    /// The suite's name.
    pub name: String,
    /// Its phases, in run order.
    pub phases: Vec<String>,
    /// What the cluster must provide.
    pub needs: Vec<String>,
    /// Phases run only to prepare another: they must pass, but are not coverage.
    pub prepare: Vec<String>,
    /// The engines its cells are split by (`[Any]` when it names none).
    pub engines: Vec<Engine>,
    /// Which CI path runs it.
    pub ci: CiPath,
}

/// Reads the suites file under `root`.
pub fn load(root: &Path) -> anyhow::Result<Vec<Suite>> {
    let path = root.join(SUITES_FILE);
    let text = fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    parse(&text).with_context(|| format!("in {}", path.display()))
}

fn strings(value: &Value, key: &str, suite: &str) -> anyhow::Result<Vec<String>> {
    match &value[key] {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|p| {
                p.as_str()
                    .map(str::to_owned)
                    .with_context(|| format!("suite {suite}: an entry of `{key}` is not a string"))
            })
            .collect(),
        _ => bail!("suite {suite}: `{key}` is not an array"),
    }
}

/// Parses the suites file; every phase belongs to exactly one suite.
pub fn parse(text: &str) -> anyhow::Result<Vec<Suite>> {
    let json: Value = serde_json::from_str(text).context("not JSON")?;
    let rows = json["suites"].as_array().context("no `suites` array")?;
    let mut suites: Vec<Suite> = Vec::new();
    for row in rows {
        let name = row["name"].as_str().context("a suite without a name")?.to_owned();
        let phases = strings(row, "phases", &name)?;
        if phases.is_empty() {
            bail!("suite {name} has no phases");
        }
        let prepare = strings(row, "prepare", &name)?;
        if let Some(p) = prepare.iter().find(|p| !phases.contains(p)) {
            bail!("suite {name}: prepare names {p:?}, which is not one of its phases");
        }
        if prepare.len() == phases.len() {
            bail!("suite {name}: every phase is a preparation, so the suite covers nothing");
        }
        let mut engines = strings(row, "engines", &name)?
            .iter()
            .map(|e| Engine::parse(e).with_context(|| format!("suite {name}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if engines.is_empty() {
            engines.push(Engine::Any);
        }
        let ci = match row["ci"].as_str() {
            Some("default") => CiPath::Default,
            Some("matrix") => CiPath::Matrix,
            other => bail!("suite {name}: `ci` must be \"default\" or \"matrix\", found {other:?}"),
        };
        for suite in &suites {
            if suite.name == name {
                bail!("suite {name} is listed twice");
            }
            if let Some(p) = phases.iter().find(|p| suite.phases.contains(p)) {
                bail!("phase {p} belongs to both {} and {name}", suite.name);
            }
        }
        suites.push(Suite {
            needs: strings(row, "needs", &name)?,
            name,
            phases,
            prepare,
            engines,
            ci,
        });
    }
    if suites.is_empty() {
        bail!("no suites");
    }
    Ok(suites)
}

/// The nextest filter of a phase: tests named `e2e_<phase with underscores>_…`.
pub fn phase_filter(phase: &str) -> String {
    format!("test(/(^|::)e2e_{}_/)", phase.replace('-', "_"))
}

/// The phase a test named `e2e_…` implements, or `None` for any other test.
pub fn phase_of<'a>(test: &str, suites: &'a [Suite]) -> Option<&'a str> {
    // `binary-id module::e2e_…` as nextest lists it, or the bare name.
    let name = test.split_whitespace().last().unwrap_or(test);
    let leaf = name.rsplit("::").next().unwrap_or(name);
    let rest = leaf.strip_prefix("e2e_")?;
    suites
        .iter()
        .flat_map(|s| s.phases.iter())
        .map(String::as_str)
        .filter(|p| rest.starts_with(&format!("{}_", p.replace('-', "_"))))
        .max_by_key(|p| p.len())
}

#[cfg(test)]
mod tests {
    use ptah_testenv::step::workspace_root;

    use super::*;

    #[test]
    fn the_repository_suites_parse_and_every_one_names_its_ci_path() {
        let suites = load(&workspace_root()).expect("suites");
        assert!(suites.len() >= 8, "{suites:?}");
        let default: Vec<&str> = suites
            .iter()
            .filter(|s| s.ci == CiPath::Default)
            .map(|s| s.name.as_str())
            .collect();
        for wanted in [
            "schema-lifecycle",
            "schema-approvals",
            "certificates",
            "migrations-postgresql",
            "migrations-mysql",
        ] {
            assert!(
                default.contains(&wanted),
                "{wanted} is not on the default CI path: {default:?}"
            );
        }
    }

    #[test]
    fn malformed_suites_are_refused_with_the_reason() {
        let cases = [
            (r#"{"suites":[{"name":"x","ci":"default"}]}"#, "no phases"),
            (r#"{"suites":[{"name":"x","phases":["a"]}]}"#, "`ci` must be"),
            (
                r#"{"suites":[{"name":"x","phases":["a"],"ci":"default","prepare":["b"]}]}"#,
                "not one of its phases",
            ),
            (
                r#"{"suites":[{"name":"x","phases":["a"],"ci":"default","prepare":["a"]}]}"#,
                "covers nothing",
            ),
            (
                r#"{"suites":[{"name":"x","phases":["a"],"ci":"default","engines":["oracle"]}]}"#,
                "unknown engine",
            ),
            (
                r#"{"suites":[{"name":"x","phases":["a"],"ci":"default"},{"name":"y","phases":["a"],"ci":"matrix"}]}"#,
                "belongs to both",
            ),
            (r#"{"suites":[]}"#, "no suites"),
        ];
        for (text, reason) in cases {
            let err = format!("{:#}", parse(text).expect_err(text));
            assert!(err.contains(reason), "{text}: {err}");
        }
    }

    #[test]
    fn a_test_name_maps_to_the_longest_phase_it_starts_with() {
        let suites = parse(
            r#"{"suites":[{"name":"m","phases":["migrations-mysql"],"ci":"default"},
                {"name":"s","phases":["schema","schema-lifecycle"],"ci":"default"}]}"#,
        )
        .expect("suites");
        assert_eq!(
            phase_of("it::e2e_migrations_mysql_lifecycle", &suites),
            Some("migrations-mysql")
        );
        assert_eq!(
            phase_of("e2e_schema_lifecycle_mariadb", &suites),
            Some("schema-lifecycle")
        );
        assert_eq!(phase_of("e2e_schema_x", &suites), Some("schema"));
        assert_eq!(phase_of("e2e_unknown_x", &suites), None);
        assert_eq!(phase_of("plain_test", &suites), None);
        assert_eq!(phase_filter("cert-rotation"), "test(/(^|::)e2e_cert_rotation_/)");
    }
}
