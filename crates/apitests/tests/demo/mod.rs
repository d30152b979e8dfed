//! The demo's stage: numbered steps, each recorded as an asciinema cast under `target/demo/`, the
//! commands a person types (kubectl and `kubectl ptah`, with the unprivileged user's kubeconfig)
//! shown live and recorded, the checks each step reads off live objects, and the summary table.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use ptah_apitests::{ClusterFiles, cast::Cast, e2e::kubectl, workspace_root};

/// Where the casts, the manifests the person applies and the summary go.
pub fn demo_dir() -> PathBuf {
    workspace_root().join("target/demo")
}

/// One finished step: its title, how long it took and the checks that held.
struct Row {
    title: String,
    took: Duration,
    checks: Vec<String>,
    cast: PathBuf,
}

/// The whole demo: the person's shell and the finished steps.
pub struct Demo {
    /// The person's kubeconfig (a copy of the unprivileged user's, its namespace set).
    kubeconfig: PathBuf,
    /// The admin kubeconfig, for what the platform team does.
    admin: PathBuf,
    /// `PATH` with `kubectl` and `kubectl-ptah` first.
    path: std::ffi::OsString,
    rows: Vec<Row>,
    started: Instant,
}

/// One step in progress: its cast and the checks that held so far.
pub struct Step {
    title: String,
    cast: Cast,
    started: Instant,
    checks: Vec<String>,
}

/// Who runs a command: the application team's person, or the platform team (cluster admin).
#[derive(Clone, Copy, PartialEq)]
pub enum As {
    Person,
    Platform,
}

impl Demo {
    /// The person's shell: `kubectl` and the freshly built `kubectl-ptah` on `PATH`, and a copy of
    /// the unprivileged user's kubeconfig.
    pub fn new(cluster: &ClusterFiles) -> Demo {
        let dir = demo_dir();
        // Casts of an earlier run would mix with this one's in the summary.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("target/demo");
        let kubeconfig = dir.join("person.kubeconfig");
        std::fs::copy(&cluster.user_kubeconfig, &kubeconfig).expect("copy the user's kubeconfig");
        let plugin = ptah_apitests::e2e::build_bin("ptah-kubectl", "kubectl-ptah");
        let dirs = [kubectl(), plugin]
            .iter()
            .filter_map(|p| p.parent().map(Path::to_owned))
            .chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            ))
            .collect::<Vec<_>>();
        Demo {
            kubeconfig,
            admin: cluster.admin_kubeconfig.clone(),
            path: std::env::join_paths(dirs).expect("PATH"),
            rows: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Starts step `title`; its cast is `target/demo/<NN>-<slug>.cast`.
    pub fn step(&self, title: &str) -> Step {
        let n = self.rows.len() + 1;
        let slug: String = title
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect::<String>()
            .split('-')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let path = demo_dir().join(format!("{n:02}-{slug}.cast"));
        eprintln!("\n=== step {n}: {title}");
        let mut cast = Cast::start(&path, title);
        cast.output(&format!("# step {n}: {title}\n"));
        Step {
            title: title.to_owned(),
            cast,
            started: Instant::now(),
            checks: Vec::new(),
        }
    }

    /// Runs `program args` (shown as `display`, the way a person types it) as `who`, with `stdin`;
    /// shows and records its output. `Err` carries stdout and stderr when it exits non-zero.
    pub fn try_run(
        &self,
        step: &mut Step,
        who: As,
        display: &str,
        program: &str,
        args: &[&str],
        stdin: Option<&str>,
    ) -> Result<String, String> {
        step.cast.command(display);
        eprintln!("$ {display}");
        let kubeconfig = match who {
            As::Person => &self.kubeconfig,
            As::Platform => &self.admin,
        };
        let mut child = Command::new(program)
            .args(args)
            .env("KUBECONFIG", kubeconfig)
            .env("PATH", &self.path)
            .env("NO_COLOR", "1")
            .current_dir(demo_dir())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start `{display}`: {e}"));
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(text.as_bytes()).expect("write stdin");
        }
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("run `{display}`: {e}"));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        step.cast.output(&text);
        eprint!("{text}");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(text)
        }
    }

    /// [`Demo::try_run`] that must succeed.
    pub fn run(&self, step: &mut Step, who: As, display: &str, program: &str, args: &[&str]) -> String {
        self.try_run(step, who, display, program, args, None)
            .unwrap_or_else(|e| panic!("step {:?}: `{display}` failed:\n{e}", step.title))
    }

    /// `kubectl <args>` as the person.
    pub fn kubectl(&self, step: &mut Step, args: &[&str]) -> String {
        let display = format!("kubectl {}", args.join(" "));
        self.run(step, As::Person, &display, "kubectl", args)
    }

    /// `kubectl ptah <args>` as the person (kubectl finds the plugin on `PATH`).
    pub fn ptah(&self, step: &mut Step, args: &[&str]) -> String {
        let mut all = vec!["ptah"];
        all.extend_from_slice(args);
        self.kubectl(step, &all)
    }

    /// Writes `manifest` to `target/demo/<file>` for the person to apply.
    pub fn manifest(&self, file: &str, manifest: &serde_json::Value) -> PathBuf {
        let path = demo_dir().join(file);
        let yaml = serde_saphyr::to_string(manifest).expect("manifest as YAML");
        std::fs::write(&path, yaml).expect("write the manifest");
        path
    }

    /// Finishes `step`: writes its cast and keeps its row for the summary.
    pub fn finish(&mut self, step: Step) {
        let Step {
            title,
            mut cast,
            started,
            checks,
        } = step;
        assert!(!checks.is_empty(), "step {title:?} checked nothing");
        let took = started.elapsed();
        cast.output(&format!(
            "# {} checks held in {:.0} s\n",
            checks.len(),
            took.as_secs_f64()
        ));
        let cast = cast.finish().expect("write the cast");
        self.rows.push(Row {
            title,
            took,
            checks,
            cast,
        });
    }

    /// The summary table (also written to `target/demo/summary.md`).
    pub fn summary(&self) -> String {
        let mut out = String::from("| # | step | time | checks held | cast |\n|---|---|---|---|---|\n");
        for (i, row) in self.rows.iter().enumerate() {
            let cast = row.cast.file_name().map(|f| f.to_string_lossy().into_owned());
            out.push_str(&format!(
                "| {} | {} | {:.0} s | {} | {} |\n",
                i + 1,
                row.title,
                row.took.as_secs_f64(),
                row.checks.join("; "),
                cast.unwrap_or_default()
            ));
        }
        out.push_str(&format!(
            "\n{} steps, every check held, in {:.0} s; casts in {}\n",
            self.rows.len(),
            self.started.elapsed().as_secs_f64(),
            demo_dir().display()
        ));
        std::fs::write(demo_dir().join("summary.md"), &out).expect("write the summary");
        out
    }
}

/// Everything the demo wrote to `target/demo/` but the person's kubeconfig: the casts, the
/// manifests and the summary, to scan for credentials.
pub fn recorded() -> String {
    let entries = std::fs::read_dir(demo_dir()).expect("target/demo");
    let mut text = String::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n != "person.kubeconfig") {
            text.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    assert!(text.contains("\"version\":2"), "the scan read the casts");
    text
}

impl Step {
    /// Records that `what` held, read off the live objects.
    pub fn held(&mut self, what: impl Into<String>) {
        let what = what.into();
        eprintln!("  ✓ {what}");
        self.cast.output(&format!("# ✓ {what}\n"));
        self.checks.push(what);
    }

    /// A note in the cast: what happens off screen (never a credential).
    pub fn note(&mut self, text: &str) {
        eprintln!("# {text}");
        self.cast.output(&format!("# {text}\n"));
    }
}
