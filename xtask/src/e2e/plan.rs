//! What one `cargo xtask e2e` invocation runs, and the scope the gate will hold it to.

use anyhow::{Context, bail};
use ptah_testenv::k8s::{Matrix, Minor};

use super::{
    Args,
    cell::Scope,
    suites::{self, CiPath, Suite},
};

/// What one invocation runs.
pub struct Plan {
    /// What the gate will hold the run to.
    pub scope: Scope,
    /// The minors, in run order.
    pub minors: Vec<Minor>,
    /// The suites, in run order.
    pub suites: Vec<Suite>,
}

/// The plan of an invocation; refuses one that names nothing, or several minors without --matrix.
pub fn plan(args: &Args, matrix: &Matrix, all: &[Suite]) -> anyhow::Result<Plan> {
    let picked_suites = |names: &[String]| -> anyhow::Result<Vec<Suite>> {
        names
            .iter()
            .map(|name| {
                all.iter().find(|s| &s.name == name).cloned().with_context(|| {
                    let known: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
                    format!(
                        "no suite {name:?} in {} (known: {})",
                        suites::SUITES_FILE,
                        known.join(", ")
                    )
                })
            })
            .collect()
    };
    let picked_minors = |names: &[String]| -> anyhow::Result<Vec<Minor>> {
        names.iter().map(|n| matrix.select(Some(n)).cloned()).collect()
    };
    if args.matrix {
        let minors = if args.kubernetes.is_empty() {
            matrix.minors.clone()
        } else {
            picked_minors(&args.kubernetes)?
        };
        let suites = if args.suite.is_empty() {
            all.to_vec()
        } else {
            picked_suites(&args.suite)?
        };
        // Every minor and every suite, in any order (newest first, say), is the whole matrix.
        let whole =
            matrix.minors.iter().all(|m| minors.contains(m)) && all.iter().all(|s| suites.contains(s));
        return Ok(Plan {
            scope: if whole { Scope::Matrix } else { Scope::Picked },
            minors,
            suites,
        });
    }
    if args.kubernetes.len() > 1 {
        bail!("several minors need --matrix");
    }
    let minor = matrix
        .select(args.kubernetes.first().map(String::as_str))?
        .clone();
    if args.ci {
        return Ok(Plan {
            scope: if minor.default { Scope::Ci } else { Scope::Picked },
            minors: vec![minor],
            suites: all.iter().filter(|s| s.ci == CiPath::Default).cloned().collect(),
        });
    }
    if args.suite.is_empty() {
        bail!("name a suite (--suite), or run the default CI path (--ci) or the matrix (--matrix)");
    }
    Ok(Plan {
        scope: Scope::Picked,
        minors: vec![minor],
        suites: picked_suites(&args.suite)?,
    })
}

#[cfg(test)]
mod tests {
    use ptah_testenv::step::workspace_root;

    use super::*;
    use crate::e2e::Provider;

    fn args(suite: &[&str], matrix: bool, ci: bool, kubernetes: &[&str]) -> Args {
        Args {
            suite: suite.iter().map(|s| (*s).to_owned()).collect(),
            matrix,
            ci,
            provider: Provider::Local,
            kubernetes: kubernetes.iter().map(|s| (*s).to_owned()).collect(),
            resume: None,
        }
    }

    #[test]
    fn only_the_whole_matrix_and_the_default_ci_path_are_scopes_the_gate_accepts() {
        let root = workspace_root();
        let matrix = Matrix::load(&root).expect("matrix");
        let all = suites::load(&root).expect("suites");
        let whole = plan(&args(&[], true, false, &[]), &matrix, &all).expect("matrix");
        assert_eq!(whole.scope, Scope::Matrix);
        assert_eq!(whole.minors.len(), matrix.minors.len());
        assert_eq!(whole.suites.len(), all.len());
        let part = plan(&args(&[], true, false, &["1.36"]), &matrix, &all).expect("part");
        assert_eq!((part.scope, part.minors.len()), (Scope::Picked, 1));
        let names: Vec<String> = matrix.minors.iter().rev().map(|m| m.minor.clone()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let reordered = plan(&args(&[], true, false, &names), &matrix, &all).expect("reordered");
        assert_eq!(reordered.scope, Scope::Matrix);
        assert_eq!(reordered.minors[0].minor, names[0]);
        let ci = plan(&Args::ci(), &matrix, &all).expect("ci");
        assert_eq!(ci.scope, Scope::Ci);
        assert!(ci.minors[0].default);
        assert!(ci.suites.iter().all(|s| s.ci == CiPath::Default));
        let ci_other = plan(&args(&[], false, true, &["1.37"]), &matrix, &all).expect("ci 1.37");
        assert_eq!(ci_other.scope, Scope::Picked);
        let one = plan(&args(&["certificates"], false, false, &[]), &matrix, &all).expect("one");
        assert_eq!(
            (one.scope, one.suites[0].name.as_str()),
            (Scope::Picked, "certificates")
        );
    }

    #[test]
    fn an_invocation_that_names_nothing_or_too_much_is_refused() {
        let root = workspace_root();
        let matrix = Matrix::load(&root).expect("matrix");
        let all = suites::load(&root).expect("suites");
        let refused = |a: Args| format!("{:#}", plan(&a, &matrix, &all).err().expect("refused"));
        assert!(refused(args(&[], false, false, &[])).contains("name a suite"));
        assert!(refused(args(&["x"], false, false, &["1.35", "1.36"])).contains("need --matrix"));
        assert!(refused(args(&["no-such-suite"], false, false, &[])).contains("known: cluster-smoke"));
        assert!(
            refused(args(&["certificates"], false, false, &["1.99"]))
                .contains("not in matrix/kubernetes.json")
        );
    }
}
