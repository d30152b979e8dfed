//! Shell `export` env files (`target/services.env`, the pod endpoints, the kind provider's): mode
//! 0600, written atomically.

use std::{fs, path::Path};

use anyhow::Context;

use super::secret;

/// The first line of `target/services.env`.
const HEADER: &str =
    "# Written by `cargo xtask services up`; load with: eval \"$(cargo xtask services env)\"";

/// Writes `vars` as `export NAME='value'` lines to `path` (mode 0600).
pub fn write(path: &Path, vars: &[(&str, String)]) -> anyhow::Result<()> {
    write_exports(path, HEADER, vars)
}

/// Writes `header` and `vars` as `export NAME='value'` lines to `path`, atomically and with mode
/// 0600 (the URLs carry passwords).
pub fn write_exports(path: &Path, header: &str, vars: &[(&str, String)]) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let tmp = path.with_extension("env.tmp");
    secret::write(&tmp, &render_exports(header, vars))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot move {} into place", tmp.display()))
}

/// `header`, then one `export NAME='value'` line per variable.
pub fn render_exports(header: &str, vars: &[(&str, String)]) -> String {
    let mut text = format!("{header}\n");
    for (name, value) in vars {
        text.push_str(&format!("export {name}={}\n", quote(value)));
    }
    text
}

/// Single-quotes a value for POSIX shells.
fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_quoted_export_lines() {
        let text = render_exports(
            HEADER,
            &[
                ("A", "postgres://app:pw@127.0.0.1:1/app".to_owned()),
                ("B", "it's".to_owned()),
            ],
        );
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "export A='postgres://app:pw@127.0.0.1:1/app'",
                r"export B='it'\''s'"
            ]
        );
    }
}
