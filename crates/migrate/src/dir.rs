//! The migration directory: pairs `<digits>_desc[.checkpoint].(up|down).sql` (the reference's
//! ten-digit layout, golang-migrate's of any width) and goose/dbmate single files `<digits>_desc.sql`.
//!
//! The directory is walked recursively in byte order of relative paths. Hidden entries (names
//! starting with `.`, such as a Kubernetes volume's `..data`) are skipped, and symlinked
//! directories are not followed. A file whose name ends in `.up.sql` or `.down.sql`, or a `.sql`
//! file whose name starts with a digit, that does not match a pattern exactly is an error rather
//! than silently ignored. Versions are ordered numerically; two files whose versions are equal
//! as numbers but written differently (`1_a`, `01_b`) are refused, as no order between them exists.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use ptah_fingerprint::Digest;

use crate::{
    Error,
    name::{MigrationName, Part, REFERENCE_DIGITS, Version, parse_name},
    sections,
};

/// One file of a migration: its path relative to the directory and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationFile {
    /// Relative path with `/` separators, as written in `ptah.sum`.
    pub path: String,
    /// The file's content.
    pub bytes: Vec<u8>,
}

/// A complete migration: both halves of one version, in a pair or in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// The version from the file name.
    pub version: Version,
    /// The version's digits as written in the file name.
    pub digits: String,
    /// The description from the file name (may contain spaces).
    pub description: String,
    /// True for a `.checkpoint.` pair.
    pub checkpoint: bool,
    /// The `.up.sql` file, or the single file that holds both sections.
    pub up: MigrationFile,
    /// The `.down.sql` file; `None` for a single file (its down section lives in `up`).
    pub down: Option<MigrationFile>,
}

impl Migration {
    /// The revision-table checksum: lowercase hex sha256 of the up file's bytes (the whole file
    /// for a single file, so it covers the file exactly as written).
    pub fn checksum(&self) -> String {
        Digest::of(&self.up.bytes).hex()
    }

    /// True for a goose/dbmate file holding both directions.
    pub fn is_single_file(&self) -> bool {
        self.down.is_none()
    }

    /// The digits as written when they differ from the reference's ten-digit layout (whose
    /// reports show the number, and stay as they were); `None` for a ten-digit name.
    pub fn file_version(&self) -> Option<&str> {
        (self.digits.len() != REFERENCE_DIGITS).then_some(self.digits.as_str())
    }

    /// The version as a person should read it: the digits as written, or the number for ten digits.
    pub fn shown_version(&self) -> String {
        self.file_version()
            .map_or_else(|| self.version.to_string(), str::to_owned)
    }
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
        files.retain(|(path, _)| is_candidate(path.rsplit('/').next().unwrap_or(path)));
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
        let mut files: Vec<&MigrationFile> = self
            .migrations
            .iter()
            .flat_map(|m| std::iter::once(&m.up).chain(m.down.as_ref()))
            .collect();
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
        } else if meta.is_file() && is_candidate(name) {
            let bytes = std::fs::read(&path).map_err(Error::io(&path))?;
            out.push((relative, bytes));
        }
    }
    Ok(())
}

/// True for a name that is (or claims to be) a migration file.
fn is_candidate(name: &str) -> bool {
    name.ends_with(".up.sql")
        || name.ends_with(".down.sql")
        || (name.ends_with(".sql") && name.starts_with(|c: char| c.is_ascii_digit()))
}

/// The files found for one version so far.
struct Found {
    name: MigrationName,
    up: Option<MigrationFile>,
    down: Option<MigrationFile>,
    single: Option<MigrationFile>,
}

impl Found {
    fn any_path(&self) -> String {
        [&self.up, &self.down, &self.single]
            .into_iter()
            .flatten()
            .map(|f| f.path.clone())
            .next()
            .unwrap_or_default()
    }
}

fn pair(files: Vec<(String, Vec<u8>)>) -> Result<Vec<Migration>, Error> {
    let mut by_version: BTreeMap<Version, Found> = BTreeMap::new();
    for (path, bytes) in files {
        let base = path.rsplit('/').next().unwrap_or(&path);
        let name = match parse_name(base) {
            Ok(Some(name)) => name,
            Ok(None) => continue,
            Err(reason) => return Err(Error::BadFileName { path, reason }),
        };
        if name.part == Part::Both {
            // Read the sections now, so that `hash` already refuses a file no tool could run.
            let text = std::str::from_utf8(&bytes).map_err(|e| Error::Header {
                path: path.clone(),
                line: 1,
                reason: format!("not UTF-8 ({e})"),
            })?;
            sections::parse(&path, text)?;
        }
        let file = MigrationFile { path, bytes };
        let entry = by_version.entry(name.version).or_insert_with(|| Found {
            name: name.clone(),
            up: None,
            down: None,
            single: None,
        });
        if entry.name.digits != name.digits {
            return Err(Error::VersionCollision {
                version: name.version,
                first: entry.any_path(),
                second: file.path,
            });
        }
        let mixed = (name.part == Part::Both) != (entry.name.part == Part::Both);
        if mixed || entry.name.description != name.description || entry.name.checkpoint != name.checkpoint {
            return Err(Error::DuplicateVersion {
                version: name.version,
                first: entry.any_path(),
                second: file.path,
            });
        }
        let slot = match name.part {
            Part::Up => &mut entry.up,
            Part::Down => &mut entry.down,
            Part::Both => &mut entry.single,
        };
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
        .map(|(version, found)| {
            let (up, down) = match found.single {
                Some(single) => (single, None),
                None => {
                    let up = found.up.ok_or(Error::Incomplete {
                        version,
                        missing: "up",
                    })?;
                    let down = found.down.ok_or(Error::Incomplete {
                        version,
                        missing: "down",
                    })?;
                    (up, Some(down))
                }
            };
            Ok(Migration {
                version,
                digits: found.name.digits,
                description: found.name.description,
                checkpoint: found.name.checkpoint,
                up,
                down,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(p: &str) -> (String, Vec<u8>) {
        (p.to_owned(), b"SELECT 1;".to_vec())
    }

    #[test]
    fn pairs_need_both_halves_and_unique_versions() {
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
        assert_eq!(
            ok.migrations()[0].file_version(),
            None,
            "ten digits show the number"
        );
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
        let err = Directory::from_files("x", vec![f("x_a.up.sql")], None).expect_err("bad name");
        assert!(matches!(err, Error::BadFileName { .. }), "{err}");
    }
}
