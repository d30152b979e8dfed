//! `target/services.env`: shell `export` lines, mode 0600, written atomically.

use std::{fs, io::Write, os::unix::fs::OpenOptionsExt, path::Path};

use anyhow::Context;

/// Writes `vars` as `export NAME='value'` lines to `path` (mode 0600).
pub fn write(path: &Path, vars: &[(&str, String)]) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let tmp = path.with_extension("env.tmp");
    let _ = fs::remove_file(&tmp);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    file.write_all(render(vars).as_bytes())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot move {} into place", tmp.display()))
}

fn render(vars: &[(&str, String)]) -> String {
    let mut text = String::from(
        "# Written by `cargo xtask services up`; load with: eval \"$(cargo xtask services env)\"\n",
    );
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
        let text = render(&[
            ("A", "postgres://app:pw@127.0.0.1:1/app".to_owned()),
            ("B", "it's".to_owned()),
        ]);
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
