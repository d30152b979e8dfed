//! The text renderings of the `status` and `up` reports (JSON is the reports themselves).
//!
//! A version shows its digits as written in the file name (`000001`, `20230101120000`); the
//! reference's ten-digit names show the number, as they always did.

use std::fmt::Write as _;

use ptah_migrate::{Directory, StatusReport, UpReport, Version};

/// The version a person reads: the file's digits when the report carries them.
fn shown(version: Version, file_version: Option<&str>) -> String {
    file_version.map_or_else(|| version.to_string(), str::to_owned)
}

/// The version a person reads, looked up in the directory (a row may have no file: the number).
fn in_dir(dir: &Directory, version: Version) -> String {
    dir.get(version)
        .map_or_else(|| version.to_string(), |m| m.shown_version())
}

/// The text of a `status` report.
pub(super) fn status_text(r: &StatusReport, dir: &Directory) -> String {
    let mut s = String::new();
    let current = r.current_version.map_or("none".to_owned(), |v| in_dir(dir, v));
    let _ = writeln!(s, "Database:        {} ({})", r.database_url, r.dialect);
    let _ = writeln!(s, "Current version: {current}");
    let _ = writeln!(
        s,
        "Migrations:      {} applied, {} pending, {} in the directory (ptah.sum {:?})",
        r.applied_migrations.len(),
        r.pending_migrations.len(),
        r.total_migrations,
        r.sum
    );
    for p in &r.pending_migrations {
        let _ = writeln!(
            s,
            "  pending   {} {} ({:?}, {} statements)",
            shown(p.version, p.file_version.as_deref()),
            p.description,
            p.transaction,
            p.statements
        );
    }
    for v in &r.out_of_order_migrations {
        let _ = writeln!(s, "  out of order {}", in_dir(dir, *v));
    }
    for m in &r.modified_migrations {
        let _ = writeln!(
            s,
            "  modified  {} (recorded {}, file {})",
            in_dir(dir, m.version),
            m.recorded_checksum,
            m.file_checksum
        );
    }
    for a in &r.ahead_migrations {
        let _ = writeln!(
            s,
            "  ahead     {} {} ({}; not in the directory)",
            a.version, a.description, a.state
        );
    }
    if let Some(d) = &r.dirty_revision {
        let _ = writeln!(
            s,
            "Dirty:           {} is {} ({}/{} statements applied)",
            in_dir(dir, d.version),
            d.state,
            d.applied,
            d.total
        );
    }
    if let Some(why) = &r.blocked {
        let _ = writeln!(s, "Blocked:         {why}");
    }
    let _ = writeln!(s, "History:         {}", r.history_fingerprint);
    s
}

/// The text of an `up` report.
pub(super) fn up_text(r: &UpReport, dir: &Directory) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Outcome: {:?}", r.outcome);
    if let Some(planned) = &r.planned {
        for m in planned {
            let _ = writeln!(
                s,
                "-- {} {} ({:?})",
                shown(m.version, m.file_version.as_deref()),
                m.description,
                m.transaction
            );
            for st in &m.statements {
                let _ = writeln!(s, "{st};");
            }
        }
    }
    let versions: Vec<String> = r.applied_versions.iter().map(|v| in_dir(dir, *v)).collect();
    if !versions.is_empty() {
        let _ = writeln!(s, "Applied: {}", versions.join(", "));
    }
    let current = r.current_version.map_or("none".to_owned(), |v| in_dir(dir, v));
    let _ = writeln!(s, "Current version: {current}");
    s
}
