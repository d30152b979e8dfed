//! The migration directory in the reference's native layout: `NNNNNNNNNN_desc[.checkpoint].(up|down).sql`.
//!
//! The directory is walked recursively in byte order of relative paths. Hidden entries (names
//! starting with `.`, such as a Kubernetes volume's `..data`) are skipped, and symlinked
//! directories are not followed. A file whose name ends in `.up.sql` or `.down.sql` but does not
//! match the pattern exactly is an error rather than silently ignored.

use std::{
    collections::BTreeMap,
    fmt,
    path::{Path, PathBuf},
};

use ptah_fingerprint::Digest;
use serde::{Deserialize, Serialize};

use crate::Error;

/// A migration version: exactly ten digits in the file name, a BIGINT in the revision table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Version(pub i64);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One file of a migration pair: its path relative to the directory and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationFile {
    /// Relative path with `/` separators, as written in `ptah.sum`.
    pub path: String,
    /// The file's content.
    pub bytes: Vec<u8>,
}

/// A complete migration: both halves of one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// The version from the file name.
    pub version: Version,
    /// The description from the file name (may contain spaces).
    pub description: String,
    /// True for a `.checkpoint.` pair.
    pub checkpoint: bool,
    /// The `.up.sql` file.
    pub up: MigrationFile,
    /// The `.down.sql` file.
    pub down: MigrationFile,
}

impl Migration {
    /// The revision-table checksum: lowercase hex sha256 of the up file's bytes.
    pub fn checksum(&self) -> String {
        Digest::of(&self.up.bytes).hex()
    }
}

/// A parsed file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileName {
    /// The version.
    pub version: Version,
    /// The description.
    pub description: String,
    /// The `.checkpoint` marker.
    pub checkpoint: bool,
    /// True for `up`, false for `down`.
    pub up: bool,
}

/// Parses a base name against `^(\d{10})_(.*)\.(down|up)(\.sql)$`; `None` when it is not a migration.
pub fn parse_file_name(name: &str) -> Option<FileName> {
    let (stem, up) = if let Some(stem) = name.strip_suffix(".up.sql") {
        (stem, true)
    } else {
        (name.strip_suffix(".down.sql")?, false)
    };
    let digits = stem.get(..10)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) || stem.as_bytes().get(10) != Some(&b'_') {
        return None;
    }
    let version = Version(digits.parse().ok()?);
    let rest = &stem[11..];
    let (description, checkpoint) = match rest.strip_suffix(".checkpoint") {
        Some(desc) => (desc, true),
        None => (rest, false),
    };
    Some(FileName {
        version,
        description: description.to_owned(),
        checkpoint,
        up,
    })
}

/// A migration directory read into memory.
#[derive(Debug, Clone)]
pub struct Directory {
    root: PathBuf,
    migrations: Vec<Migration>,
    sum: Option<Vec<u8>>,
}

/// The name of the integrity file at the directory's root.
pub const SUM_FILE: &str = "ptah.sum";

impl Directory {
    /// Reads every migration below `root`; fails on bad names, duplicates and missing halves.
    pub fn read(root: &Path) -> Result<Directory, Error> {
        let mut files = Vec::new();
        walk(root, "", &mut files)?;
        files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let sum = match std::fs::read(root.join(SUM_FILE)) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(root.join(SUM_FILE))(e)),
        };
        let migrations = pair(files)?;
        Ok(Directory {
            root: root.to_owned(),
            migrations,
            sum,
        })
    }

    /// Builds a directory from in-memory files `(relative path, bytes)`, e.g. from an artifact.
    pub fn from_files(
        root: impl Into<PathBuf>,
        mut files: Vec<(String, Vec<u8>)>,
        sum: Option<Vec<u8>>,
    ) -> Result<Directory, Error> {
        files.retain(|(path, _)| {
            let base = path.rsplit('/').next().unwrap_or(path);
            base.ends_with(".up.sql") || base.ends_with(".down.sql")
        });
        files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let migrations = pair(files)?;
        Ok(Directory {
            root: root.into(),
            migrations,
            sum,
        })
    }

    /// The directory this was read from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Complete migrations in version order.
    pub fn migrations(&self) -> &[Migration] {
        &self.migrations
    }

    /// The raw bytes of `ptah.sum`, when the directory has one.
    pub fn sum_bytes(&self) -> Option<&[u8]> {
        self.sum.as_deref()
    }

    /// Every migration file (both halves) sorted by relative path, as `ptah.sum` lists them.
    pub fn files(&self) -> Vec<&MigrationFile> {
        let mut files: Vec<&MigrationFile> = self.migrations.iter().flat_map(|m| [&m.up, &m.down]).collect();
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        files
    }

    /// The migration with this version.
    pub fn get(&self, version: Version) -> Option<&Migration> {
        self.migrations
            .binary_search_by(|m| m.version.cmp(&version))
            .ok()
            .map(|i| &self.migrations[i])
    }
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(Error::io(dir))?;
    for entry in entries {
        let entry = entry.map_err(Error::io(dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            tracing::warn!(dir = %dir.display(), "skipping a file whose name is not UTF-8");
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let relative = format!("{prefix}{name}");
        let link = entry.file_type().map_err(Error::io(&path))?;
        let meta = std::fs::metadata(&path).map_err(Error::io(&path))?;
        if meta.is_dir() {
            if link.is_symlink() {
                tracing::warn!(path = %relative, "not following a symlinked directory");
                continue;
            }
            walk(&path, &format!("{relative}/"), out)?;
        } else if meta.is_file() && (name.ends_with(".up.sql") || name.ends_with(".down.sql")) {
            let bytes = std::fs::read(&path).map_err(Error::io(&path))?;
            out.push((relative, bytes));
        }
    }
    Ok(())
}

type Halves = (Option<MigrationFile>, Option<MigrationFile>, FileName);

fn pair(files: Vec<(String, Vec<u8>)>) -> Result<Vec<Migration>, Error> {
    let mut by_version: BTreeMap<Version, Halves> = BTreeMap::new();
    for (path, bytes) in files {
        let base = path.rsplit('/').next().unwrap_or(&path);
        let name = parse_file_name(base).ok_or_else(|| Error::BadFileName {
            path: path.clone(),
            reason: "expected exactly ten digits, an underscore, a description and .up.sql or .down.sql"
                .into(),
        })?;
        let file = MigrationFile { path, bytes };
        let entry = by_version
            .entry(name.version)
            .or_insert_with(|| (None, None, name.clone()));
        if entry.2.description != name.description || entry.2.checkpoint != name.checkpoint {
            let other = entry.0.as_ref().or(entry.1.as_ref()).map(|f| f.path.clone());
            return Err(Error::DuplicateVersion {
                version: name.version,
                first: other.unwrap_or_default(),
                second: file.path,
            });
        }
        let slot = if name.up { &mut entry.0 } else { &mut entry.1 };
        if let Some(previous) = slot.take() {
            return Err(Error::DuplicateVersion {
                version: name.version,
                first: previous.path,
                second: file.path,
            });
        }
        *slot = Some(file);
    }
    by_version
        .into_iter()
        .map(|(version, (up, down, name))| {
            let up = up.ok_or(Error::Incomplete {
                version,
                missing: "up",
            })?;
            let down = down.ok_or(Error::Incomplete {
                version,
                missing: "down",
            })?;
            Ok(Migration {
                version,
                description: name.description,
                checkpoint: name.checkpoint,
                up,
                down,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_follow_the_reference_pattern() {
        let n = parse_file_name("1785255952_create invoices.up.sql").expect("valid");
        assert_eq!(n.version, Version(1_785_255_952));
        assert_eq!(n.description, "create invoices");
        assert!(n.up && !n.checkpoint);
        let c = parse_file_name("1785300000_squash.checkpoint.down.sql").expect("valid");
        assert!(c.checkpoint && !c.up);
        assert_eq!(c.description, "squash");
        assert_eq!(
            parse_file_name("0000000001_.up.sql")
                .expect("empty desc")
                .description,
            ""
        );
        for bad in [
            "178525595_x.up.sql",
            "17852559521_x.up.sql",
            "1785255952-x.up.sql",
            "1785255952_x.sql",
            "1785255952_x.up.SQL",
            "abcdefghij_x.up.sql",
            "1785255952_x.up.sql.bak",
        ] {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn pairs_need_both_halves_and_unique_versions() {
        let f = |p: &str| (p.to_owned(), b"SELECT 1;".to_vec());
        let ok = Directory::from_files(
            "x",
            vec![
                f("b/0000000002_b.down.sql"),
                f("0000000002_b.up.sql"),
                f("a/0000000001_a.up.sql"),
                f("a/0000000001_a.down.sql"),
            ],
            None,
        )
        .expect("complete");
        let versions: Vec<i64> = ok.migrations().iter().map(|m| m.version.0).collect();
        assert_eq!(versions, [1, 2]);
        assert_eq!(ok.files()[0].path, "0000000002_b.up.sql");
        let err = Directory::from_files("x", vec![f("0000000001_a.up.sql")], None).expect_err("no down");
        assert!(matches!(err, Error::Incomplete { missing: "down", .. }), "{err}");
        let err = Directory::from_files(
            "x",
            vec![
                f("0000000001_a.up.sql"),
                f("0000000001_a.down.sql"),
                f("0000000001_b.up.sql"),
            ],
            None,
        )
        .expect_err("two descriptions");
        assert!(matches!(err, Error::DuplicateVersion { .. }), "{err}");
        let err = Directory::from_files("x", vec![f("1_a.up.sql")], None).expect_err("bad name");
        assert!(matches!(err, Error::BadFileName { .. }), "{err}");
    }
}
