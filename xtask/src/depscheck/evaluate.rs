//! The pure part of deps-check: `cargo metadata` in, a report of every checked closure out.
//!
//! Which edges count: only those with a normal dependency kind. Dev-dependencies never reach a shipped
//! binary. Build-dependencies are left out too: they run on the build machine, not in the process whose
//! credentials the rules protect, and a `-sys` crate that links a native client library is itself a
//! normal dependency, so linking a driver is still caught. Edges without kind information (very old
//! cargo) count as normal, so the check errs towards failing.
//!
//! The graph is cargo's workspace-wide resolve: features are unified across all members and every
//! target platform's dependencies are included. That is a superset of what `cargo build -p <one>`
//! links, and exactly what `cargo build --workspace` links, so a pass here is a pass for both.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use anyhow::{Context, bail};
use cargo_metadata::{DependencyKind, Metadata, NodeDep, Package, PackageId};

use super::rules::{CrateSet, Rule, Subject};

/// What deps-check found.
#[derive(Debug)]
pub struct Report {
    /// Every workspace package some rule applies to, by name.
    pub checked: Vec<Checked>,
    /// Subjects of rules that no workspace package matches yet (`bin manager`, `ptah-policy`, ...).
    pub absent: Vec<String>,
}

impl Report {
    pub fn violations(&self) -> impl Iterator<Item = &Violation> {
        self.checked.iter().flat_map(|c| c.violations.iter())
    }
}

/// One checked workspace package.
#[derive(Debug)]
pub struct Checked {
    pub package: String,
    /// Its binary targets, so a reader sees which package `bin manager` resolved to.
    pub bins: Vec<String>,
    /// Packages in its normal dependency closure, itself excluded.
    pub closure_size: usize,
    pub violations: Vec<Violation>,
}

/// A forbidden crate in a closure, and how it got there.
#[derive(Debug, PartialEq, Eq)]
pub struct Violation {
    /// Package names from the checked package to the forbidden crate, both included.
    pub path: Vec<String>,
    pub forbidden: &'static str,
    pub why: &'static str,
}

impl Violation {
    pub fn offender(&self) -> &str {
        self.path.last().map_or("", String::as_str)
    }
}

/// Evaluates `rules` against the resolved graph in `metadata`.
pub fn evaluate(metadata: &Metadata, rules: &[Rule]) -> anyhow::Result<Report> {
    let graph = Graph::new(metadata)?;
    let mut checked: BTreeMap<&PackageId, Checked> = BTreeMap::new();
    let mut absent = Vec::new();
    // Two rules can forbid the same crate in one package (`ptah-runner` is both a binary and a pure
    // crate); it is one problem, reported once.
    let mut seen: HashSet<(&PackageId, &str, &PackageId)> = HashSet::new();

    for rule in rules {
        let (subjects, missing) = graph.select(rule.subject);
        absent.extend(missing);
        for package in subjects {
            let entry = checked.entry(&package.id).or_insert_with(|| Checked {
                package: package.name.to_string(),
                bins: package
                    .targets
                    .iter()
                    .filter(|t| t.is_bin())
                    .map(|t| t.name.clone())
                    .collect(),
                closure_size: graph.closure_size(&package.id),
                violations: Vec::new(),
            });
            for set in rule.forbids {
                for path in graph.entry_paths(&package.id, set) {
                    let Some(&offender) = path.last() else { continue };
                    if seen.insert((&package.id, set.name, offender)) {
                        entry.violations.push(Violation {
                            path: path.iter().map(|id| graph.name(id).to_owned()).collect(),
                            forbidden: set.name,
                            why: rule.why,
                        });
                    }
                }
            }
        }
    }

    let mut checked: Vec<Checked> = checked.into_values().collect();
    checked.sort_by(|a, b| a.package.cmp(&b.package));
    let mut once = HashSet::new();
    absent.retain(|subject| once.insert(subject.clone()));
    Ok(Report { checked, absent })
}

/// The resolved graph, restricted to edges that ship.
struct Graph<'m> {
    packages: HashMap<&'m PackageId, &'m Package>,
    shipped: HashMap<&'m PackageId, Vec<&'m PackageId>>,
    members: Vec<&'m Package>,
}

impl<'m> Graph<'m> {
    fn new(metadata: &'m Metadata) -> anyhow::Result<Self> {
        let Some(resolve) = &metadata.resolve else {
            bail!("cargo metadata has no resolved graph (was it run with --no-deps?)");
        };
        let packages: HashMap<_, _> = metadata.packages.iter().map(|p| (&p.id, p)).collect();
        let shipped = resolve
            .nodes
            .iter()
            .map(|node| {
                (
                    &node.id,
                    node.deps.iter().filter(|d| ships(d)).map(|d| &d.pkg).collect(),
                )
            })
            .collect();
        let members = metadata
            .workspace_members
            .iter()
            .map(|id| {
                packages
                    .get(id)
                    .copied()
                    .with_context(|| format!("workspace member {id} not in packages"))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            packages,
            shipped,
            members,
        })
    }

    fn name(&self, id: &'m PackageId) -> &'m str {
        self.packages
            .get(id)
            .map_or(id.repr.as_str(), |p| p.name.as_str())
    }

    fn deps(&self, id: &PackageId) -> &[&'m PackageId] {
        self.shipped.get(id).map_or(&[], Vec::as_slice)
    }

    /// The workspace packages a subject selects, and the subject's parts that select nothing.
    fn select(&self, subject: Subject) -> (Vec<&'m Package>, Vec<String>) {
        let named = |name: &str| {
            self.members
                .iter()
                .copied()
                .filter(|p| p.name.as_str() == name)
                .collect()
        };
        match subject {
            Subject::Binary(bin) => {
                let found: Vec<_> = self
                    .members
                    .iter()
                    .copied()
                    .filter(|p| p.targets.iter().any(|t| t.is_bin() && t.name == bin))
                    .collect();
                let missing = if found.is_empty() {
                    vec![format!("bin {bin}")]
                } else {
                    vec![]
                };
                (found, missing)
            }
            Subject::Packages(names) => {
                let mut found = Vec::new();
                let mut missing = Vec::new();
                for name in names {
                    let these: Vec<_> = named(name);
                    if these.is_empty() {
                        missing.push((*name).to_owned());
                    }
                    found.extend(these);
                }
                (found, missing)
            }
            Subject::PackagePrefix(prefix) => {
                let found: Vec<_> = self
                    .members
                    .iter()
                    .copied()
                    .filter(|p| p.name.starts_with(prefix))
                    .collect();
                let missing = if found.is_empty() {
                    vec![format!("{prefix}*")]
                } else {
                    vec![]
                };
                (found, missing)
            }
            Subject::EveryMember => (self.members.clone(), vec![]),
        }
    }

    fn closure_size(&self, root: &PackageId) -> usize {
        let mut seen: HashSet<&PackageId> = HashSet::from([root]);
        let mut queue: VecDeque<&PackageId> = VecDeque::from([root]);
        while let Some(id) = queue.pop_front() {
            for &dep in self.deps(id) {
                if seen.insert(dep) {
                    queue.push_back(dep);
                }
            }
        }
        seen.len() - 1
    }

    /// Shortest paths from `root` to each crate of `set` that is reached without passing through another
    /// crate of `set`: the points where the set entered the closure. A driver's own dependencies
    /// (`sqlx` → `sqlx-core`) would only repeat the same finding.
    fn entry_paths(&self, root: &'m PackageId, set: &CrateSet) -> Vec<Vec<&'m PackageId>> {
        let mut parent: HashMap<&PackageId, &PackageId> = HashMap::new();
        let mut seen: HashSet<&PackageId> = HashSet::from([root]);
        let mut queue: VecDeque<&PackageId> = VecDeque::from([root]);
        let mut hits = Vec::new();
        while let Some(id) = queue.pop_front() {
            for &dep in self.deps(id) {
                if !seen.insert(dep) {
                    continue;
                }
                parent.insert(dep, id);
                if set.contains(self.name(dep)) {
                    hits.push(dep);
                } else {
                    queue.push_back(dep);
                }
            }
        }
        hits.into_iter()
            .map(|hit| {
                let mut path = vec![hit];
                while let Some(&up) = path.last().and_then(|last| parent.get(last)) {
                    path.push(up);
                }
                path.reverse();
                path
            })
            .collect()
    }
}

fn ships(dep: &NodeDep) -> bool {
    dep.dep_kinds.is_empty()
        || dep
            .dep_kinds
            .iter()
            .any(|k| !matches!(k.kind, DependencyKind::Development | DependencyKind::Build))
}
