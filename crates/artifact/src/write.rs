//! Write a pulled artifact to disk: the destination must not exist; files are staged in a
//! sibling directory (read-only files `0400`, directories `0755`), fsynced, then renamed in.

use std::{
    fs,
    io::Write as _,
    os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _},
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use crate::{Error, File, Limits};

/// Mode of written files: read-only for the owner.
pub const FILE_MODE: u32 = 0o400;
/// Mode of written directories.
pub const DIR_MODE: u32 = 0o755;

/// Writes `files` below the new directory `dest`; nothing is left behind on failure.
///
/// The final rename does not replace a non-empty directory or a file; a concurrent process
/// creating an *empty* directory at `dest` between the check and the rename is not detected.
pub fn write_files(files: &[File], dest: &Path, limits: &Limits) -> Result<(), Error> {
    let refuse = |reason: &str| Error::Destination {
        path: dest.to_owned(),
        reason: reason.to_owned(),
    };
    if fs::symlink_metadata(dest).is_ok() {
        return Err(refuse("already exists"));
    }
    for file in files {
        limits.check_path(&file.path)?;
    }
    let name = dest
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| refuse("has no final UTF-8 component"))?;
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(refuse("its parent directory does not exist"));
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let staging = parent.join(format!(".{name}.ptah-staging-{}-{nanos}", std::process::id()));
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&staging)
        .map_err(Error::io(&staging))?;
    let result = stage(files, &staging).and_then(|()| {
        fs::set_permissions(&staging, fs::Permissions::from_mode(DIR_MODE)).map_err(Error::io(&staging))?;
        if fs::symlink_metadata(dest).is_ok() {
            return Err(refuse("appeared while writing"));
        }
        fs::rename(&staging, dest).map_err(Error::io(dest))
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

fn stage(files: &[File], staging: &Path) -> Result<(), Error> {
    for file in files {
        let target = staging.join(&file.path);
        let mut dir = staging.to_owned();
        let segments: Vec<&str> = file.path.split('/').collect();
        for segment in &segments[..segments.len().saturating_sub(1)] {
            dir.push(segment);
            match fs::symlink_metadata(&dir) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(Error::UnsafePath {
                        path: file.path.clone(),
                        reason: "a parent of this path is a file",
                    });
                }
                Err(_) => {
                    fs::DirBuilder::new()
                        .mode(DIR_MODE)
                        .create(&dir)
                        .map_err(Error::io(&dir))?;
                    fs::set_permissions(&dir, fs::Permissions::from_mode(DIR_MODE))
                        .map_err(Error::io(&dir))?;
                }
            }
        }
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&target)
            .map_err(Error::io(&target))?;
        out.write_all(&file.bytes).map_err(Error::io(&target))?;
        out.sync_all().map_err(Error::io(&target))?;
        fs::set_permissions(&target, fs::Permissions::from_mode(FILE_MODE)).map_err(Error::io(&target))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ptah-artifact-write-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("mkdir");
        Scratch(dir)
    }

    fn file(path: &str, bytes: &[u8]) -> File {
        File {
            path: path.to_owned(),
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn files_are_written_read_only_under_0755_directories() {
        let root = scratch("ok");
        let dest = root.0.join("out");
        let files = [file("ptah.sum", b"sum"), file("a/b/0001_x.up.sql", b"SELECT 1;")];
        write_files(&files, &dest, &Limits::default()).expect("write");
        assert_eq!(
            fs::read(dest.join("a/b/0001_x.up.sql")).expect("read"),
            b"SELECT 1;"
        );
        let mode = |p: &Path| fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&dest.join("ptah.sum")), FILE_MODE);
        assert_eq!(mode(&dest.join("a/b")), DIR_MODE);
        assert_eq!(mode(&dest), DIR_MODE);
        let leftovers: Vec<_> = fs::read_dir(&root.0).expect("ls").collect();
        assert_eq!(leftovers.len(), 1, "no staging directory is left behind");
    }

    #[test]
    fn an_existing_destination_is_refused_and_left_alone() {
        let root = scratch("exists");
        let dest = root.0.join("out");
        fs::create_dir(&dest).expect("mkdir");
        let err = write_files(&[file("a.sql", b"x")], &dest, &Limits::default()).expect_err("refused");
        assert!(matches!(err, Error::Destination { .. }), "{err}");
        assert_eq!(fs::read_dir(&dest).expect("ls").count(), 0);
    }

    #[test]
    fn a_bad_path_or_a_file_parent_leaves_nothing_behind() {
        let root = scratch("bad");
        let dest = root.0.join("out");
        for (files, why) in [
            (vec![file("../escape.sql", b"x")], "parent directory segment `..`"),
            (
                vec![file("a", b"x"), file("a/b.sql", b"y")],
                "a parent of this path is a file",
            ),
            (vec![file("a.sql", b"x"), file("a.sql", b"y")], "already exists"),
        ] {
            let r = write_files(&files, &dest, &Limits::default());
            match &r {
                Err(Error::UnsafePath { reason, .. }) => assert_eq!(*reason, why, "{r:?}"),
                Err(Error::Io { source, .. }) => {
                    assert_eq!(source.kind(), std::io::ErrorKind::AlreadyExists, "{r:?}");
                    assert_eq!(why, "already exists", "{r:?}");
                }
                other => panic!("{why}: {other:?}"),
            }
            assert!(!dest.exists());
            assert_eq!(fs::read_dir(&root.0).expect("ls").count(), 0);
        }
        assert!(!root.0.join("escape.sql").exists());
    }
}
