//! How full the disk a run writes to is: a build that runs out of space fails with an error far
//! above the tail CI shows, so the failed step itself names the free space and this run's share.

use std::{fs, os::unix::fs::MetadataExt, path::Path};

/// Below this much free space a failed command names the disk.
const LOW_BYTES: u64 = 4 << 30;

/// Free and total bytes of one file system.
#[derive(Debug, Clone, Copy)]
pub struct Space {
    /// Bytes an unprivileged writer may still use.
    pub free: u64,
    /// The file system's size.
    pub total: u64,
}

/// The space of the file system holding `path`, if it can be read.
pub fn space(path: &Path) -> Option<Space> {
    let stat = rustix::fs::statvfs(path).ok()?;
    Some(Space {
        free: stat.f_bavail.saturating_mul(stat.f_frsize),
        total: stat.f_blocks.saturating_mul(stat.f_frsize),
    })
}

/// Bytes allocated to the files under `path` (symbolic links not followed; unreadable entries
/// count nothing).
pub fn tree_bytes(path: &Path) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    let own = meta.blocks().saturating_mul(512);
    if !meta.is_dir() {
        return own;
    }
    let children = fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| tree_bytes(&e.path())).sum::<u64>())
        .unwrap_or(0);
    own + children
}

/// `" (only N MiB free of M GiB on the file system of <target>, which holds G GiB: …)"` when the
/// file system holding `target` is short of space, else nothing.
pub fn low_space_note(target: &Path) -> String {
    match space(target) {
        Some(s) if s.free < LOW_BYTES => format!(
            " (only {} MiB free of {} GiB on the file system of {}, which itself holds {:.1} GiB: \
             a full disk may be the cause)",
            s.free >> 20,
            s.total >> 30,
            target.display(),
            tree_bytes(target) as f64 / f64::from(1u32 << 30),
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_counts_its_files_allocated_bytes() {
        let base = std::env::temp_dir().join(format!("ptah-disk-tree-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("a/b")).expect("dirs");
        fs::write(base.join("a/b/one"), vec![1u8; 1 << 20]).expect("one");
        fs::write(base.join("two"), vec![2u8; 1 << 20]).expect("two");
        std::os::unix::fs::symlink("/", base.join("root")).expect("link");
        let bytes = tree_bytes(&base);
        fs::remove_dir_all(&base).expect("cleanup");
        // Two 1 MiB files plus directory and link entries; the link to / is not followed.
        assert!((2 << 20..3 << 20).contains(&bytes), "{bytes}");
    }

    #[test]
    fn the_space_of_this_file_system_is_read_and_a_roomy_one_adds_no_note() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let s = space(here).expect("statvfs");
        assert!(s.total > 0 && s.free > 0 && s.free <= s.total, "{s:?}");
        assert!(space(Path::new("/no/such/directory")).is_none());
        if s.free >= LOW_BYTES {
            assert_eq!(low_space_note(here), "");
        } else {
            assert!(low_space_note(here).contains("MiB free of"));
        }
    }
}
