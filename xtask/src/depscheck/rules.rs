//! The boundaries of DESIGN.md §3 and §4, written down as data.
//!
//! Changing a boundary means changing a row here, and a reviewer sees the whole policy in one screen.

/// How a crate name is matched.
#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    Exact(&'static str),
    /// A family of crates that ship together (`sqlx`, `sqlx-core`, `sqlx-postgres`, ...).
    Prefix(&'static str),
}

impl Pattern {
    pub fn matches(self, name: &str) -> bool {
        match self {
            Pattern::Exact(exact) => name == exact,
            Pattern::Prefix(prefix) => name.starts_with(prefix),
        }
    }
}

/// A named set of crates that a checked closure must not contain.
#[derive(Debug)]
pub struct CrateSet {
    pub name: &'static str,
    pub patterns: &'static [Pattern],
}

impl CrateSet {
    pub fn contains(&self, name: &str) -> bool {
        self.patterns.iter().any(|p| p.matches(name))
    }
}

/// Anything that can open a database connection or link a client library for one.
pub const DB_DRIVERS: CrateSet = CrateSet {
    name: "database driver",
    patterns: &[
        // `postgres`, `postgres-protocol`, `postgres-types`, `postgres-native-tls`, ...
        Pattern::Prefix("postgres"),
        // `tokio-postgres` and its TLS adapters.
        Pattern::Prefix("tokio-postgres"),
        // `mysql`, `mysql_async`, `mysql_common`, `mysqlclient-sys`.
        Pattern::Prefix("mysql"),
        Pattern::Prefix("mariadb"),
        Pattern::Prefix("sqlx"),
        Pattern::Prefix("diesel"),
        Pattern::Prefix("sea-orm"),
        Pattern::Exact("rusqlite"),
        Pattern::Prefix("libsqlite3"),
        Pattern::Prefix("libpq"),
        Pattern::Exact("pq-sys"),
        Pattern::Exact("tiberius"),
    ],
};

/// The Kubernetes client and API types: holding them means being able to talk to the API server.
pub const KUBE: CrateSet = CrateSet {
    name: "kubernetes client",
    patterns: &[
        Pattern::Exact("kube"),
        Pattern::Exact("kube-client"),
        Pattern::Exact("kube-runtime"),
        Pattern::Exact("kube-core"),
        Pattern::Exact("kube-derive"),
        Pattern::Exact("k8s-openapi"),
    ],
};

/// This workspace's own database crates: a control-plane crate that links one links a driver and
/// the code that drives it, even if a feature flag or a refactor hides the driver crate itself.
pub const DB_CRATES: CrateSet = CrateSet {
    name: "database crate of this workspace",
    patterns: &[
        // `ptah-engine`, or `ptah-engine-postgres` + `ptah-engine-mysql` if it is split (DESIGN.md §3).
        Pattern::Prefix("ptah-engine"),
        Pattern::Exact("ptah-migrate"),
    ],
};

/// TLS stacks other than rustls + ring (DESIGN.md §8).
pub const FOREIGN_TLS: CrateSet = CrateSet {
    name: "second TLS stack",
    patterns: &[
        // `aws-lc-rs`, `aws-lc-sys`, `aws-lc-fips-sys`.
        Pattern::Prefix("aws-lc"),
        // Exact, because `openssl-probe` only locates CA files and is fine.
        Pattern::Exact("openssl"),
        Pattern::Exact("openssl-sys"),
        Pattern::Exact("native-tls"),
    ],
};

/// Which workspace packages a rule applies to.
#[derive(Clone, Copy, Debug)]
pub enum Subject {
    /// The workspace package that builds a binary target of this name. Matching the binary rather than
    /// the package keeps the rule true when a binary moves between packages.
    Binary(&'static str),
    /// Workspace packages of exactly these names.
    Packages(&'static [&'static str]),
    /// Workspace packages whose names start with this (`ptah-engine`, `ptah-engine-postgres`, ...).
    PackagePrefix(&'static str),
    /// Every workspace package.
    EveryMember,
}

/// One boundary: the closure of each package the subject selects contains nothing from `forbids`.
#[derive(Debug)]
pub struct Rule {
    pub subject: Subject,
    pub forbids: &'static [&'static CrateSet],
    /// The sentence of DESIGN.md this rule enforces, printed next to a violation.
    pub why: &'static str,
}

/// §3 crates with "may depend on kube? no" and "may touch a DB? no".
const PURE: &[&str] = &[
    "ptah-fingerprint",
    "ptah-ocireference",
    "ptah-registrygrant",
    "ptah-dataplane",
    "ptah-resultdelivery",
    "ptah-resultclient",
    "ptah-dburl",
    "ptah-plancontract",
    "ptah-migrationplan",
    "ptah-policy",
    "ptah-telemetry",
    "ptah-schema",
    "ptah-artifact",
    "ptah-runner",
];

/// §3 crates that may use kube but must never touch a database.
const CONTROL_PLANE: &[&str] = &[
    "ptah-api",
    "ptah-resultreceiver",
    "ptah-planstore",
    "ptah-targetlock",
    "ptah-controllerstate",
    "ptah-workload",
    "ptah-controller",
    "ptah-admission",
    "ptah-certrotation",
    "ptah-crdupgrade",
    "ptah-managercache",
    "ptah-views",
    // kubectl-ptah reads plans and status; an approver's laptop never needs a database driver.
    "ptah-kubectl",
    // The manager's package, whatever its binary is called: the `manager` binary rule alone would
    // miss a library half of the package.
    "ptah-manager",
];

/// The rules `cargo xtask deps-check` enforces.
pub const RULES: &[Rule] = &[
    Rule {
        subject: Subject::Binary("manager"),
        forbids: &[&DB_DRIVERS, &DB_CRATES],
        why: "the manager never touches a database",
    },
    Rule {
        subject: Subject::Binary("ptah-runner"),
        forbids: &[&KUBE],
        why: "the process that touches a database never holds a Kubernetes credential",
    },
    Rule {
        subject: Subject::Binary("ptah"),
        forbids: &[&KUBE],
        why: "the process that touches a database never holds a Kubernetes credential",
    },
    Rule {
        subject: Subject::Packages(PURE),
        forbids: &[&KUBE, &DB_DRIVERS, &DB_CRATES],
        why: "a pure crate depends on neither kube nor a database driver",
    },
    Rule {
        subject: Subject::Packages(CONTROL_PLANE),
        forbids: &[&DB_DRIVERS, &DB_CRATES],
        why: "control-plane crates never touch a database",
    },
    Rule {
        subject: Subject::PackagePrefix("ptah-engine"),
        forbids: &[&KUBE],
        why: "database engines never hold a Kubernetes credential",
    },
    Rule {
        subject: Subject::Packages(&["ptah-migrate"]),
        forbids: &[&KUBE],
        why: "database engines never hold a Kubernetes credential",
    },
    Rule {
        // `cargo xtask crds --check` builds xtask; the drivers belong to ptah-bench.
        subject: Subject::Binary("xtask"),
        forbids: &[&DB_DRIVERS, &DB_CRATES],
        why: "xtask is thin dispatch: the benchmarks and the demo, which drive databases, are ptah-bench",
    },
    Rule {
        // The environment starts database servers; it never links a client of them.
        subject: Subject::Packages(&["ptah-testenv"]),
        forbids: &[&DB_DRIVERS, &DB_CRATES],
        why: "the development environment starts databases and never links a driver",
    },
    Rule {
        subject: Subject::EveryMember,
        forbids: &[&FOREIGN_TLS],
        why: "one TLS stack: rustls with ring, no OpenSSL, no aws-lc",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_families_match_their_members_and_nothing_near_them() {
        for name in [
            "tokio-postgres",
            "postgres-protocol",
            "mysql_async",
            "mysql_common",
            "sqlx-core",
            "libpq-sys",
        ] {
            assert!(DB_DRIVERS.contains(name), "{name} should be a driver");
        }
        for name in ["serde", "tokio", "ptah-schema", "sea-query"] {
            assert!(!DB_DRIVERS.contains(name), "{name} is not a driver");
        }
    }

    #[test]
    fn workspace_database_crates_are_the_engines_and_migrate() {
        for name in [
            "ptah-engine",
            "ptah-engine-postgres",
            "ptah-engine-mysql",
            "ptah-migrate",
        ] {
            assert!(DB_CRATES.contains(name), "{name} touches a database");
        }
        for name in [
            "ptah-migrationplan",
            "ptah-schema",
            "ptah-controller",
            "ptah-migrate-docs",
        ] {
            assert!(!DB_CRATES.contains(name), "{name} is not a database crate");
        }
    }

    /// The sets `RULES` forbid for one workspace package (through `Packages` subjects).
    fn forbidden_for(package: &str) -> Vec<&'static str> {
        let mut sets: Vec<&'static str> = RULES
            .iter()
            .filter(|r| matches!(r.subject, Subject::Packages(names) if names.contains(&package)))
            .flat_map(|r| r.forbids.iter().map(|set| set.name))
            .collect();
        sets.sort_unstable();
        sets.dedup();
        sets
    }

    #[test]
    fn pure_crates_may_hold_neither_kube_nor_a_database() {
        for package in ["ptah-plancontract", "ptah-telemetry"] {
            assert_eq!(
                forbidden_for(package),
                [
                    "database crate of this workspace",
                    "database driver",
                    "kubernetes client"
                ],
                "{package}"
            );
        }
    }

    #[test]
    fn manager_side_crates_may_hold_no_driver_and_no_engine() {
        for package in [
            "ptah-planstore",
            "ptah-targetlock",
            "ptah-workload",
            "ptah-controllerstate",
            "ptah-managercache",
            "ptah-controller",
            "ptah-manager",
        ] {
            assert_eq!(
                forbidden_for(package),
                ["database crate of this workspace", "database driver"],
                "{package}"
            );
        }
        for name in ["tokio-postgres", "mysql_async", "postgres-protocol"] {
            assert!(DB_DRIVERS.contains(name), "{name}");
        }
    }

    #[test]
    fn openssl_probe_is_not_a_tls_stack() {
        assert!(FOREIGN_TLS.contains("openssl-sys"));
        assert!(FOREIGN_TLS.contains("aws-lc-sys"));
        assert!(!FOREIGN_TLS.contains("openssl-probe"));
        assert!(!FOREIGN_TLS.contains("rustls"));
    }
}
