//! Extraction limits and the path rules every file inside an artifact must follow.

use crate::Error;

/// One MiB.
const MIB: u64 = 1024 * 1024;

/// The bounds a pull (and a push) enforces; the defaults are the reference CLI's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Files (layers) per artifact.
    pub max_files: usize,
    /// Bytes per file.
    pub max_file_size: u64,
    /// Bytes over all files.
    pub max_total_size: u64,
    /// Bytes of the manifest.
    pub max_manifest_size: u64,
    /// Bytes of a path.
    pub max_path_len: usize,
    /// Segments of a path.
    pub max_path_depth: usize,
    /// Referrers listed for one subject.
    pub max_referrers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_files: 10_000,
            max_file_size: 64 * MIB,
            max_total_size: 512 * MIB,
            max_manifest_size: 4 * MIB,
            max_path_len: 1024,
            max_path_depth: 32,
            max_referrers: 1_000,
        }
    }
}

impl Limits {
    /// Refuses `count` files above [`Limits::max_files`].
    pub fn check_file_count(&self, count: usize) -> Result<(), Error> {
        if count > self.max_files {
            return Err(Error::LimitExceeded {
                what: format!("the file count ({count})"),
                limit: self.max_files as u64,
            });
        }
        Ok(())
    }

    /// Refuses a file of `size` bytes above [`Limits::max_file_size`].
    pub fn check_file_size(&self, path: &str, size: u64) -> Result<(), Error> {
        if size > self.max_file_size {
            return Err(Error::LimitExceeded {
                what: format!("file {} ({size} bytes)", shown(path)),
                limit: self.max_file_size,
            });
        }
        Ok(())
    }

    /// Refuses a running total above [`Limits::max_total_size`].
    pub fn check_total_size(&self, total: u64) -> Result<(), Error> {
        if total > self.max_total_size {
            return Err(Error::LimitExceeded {
                what: format!("the total size ({total} bytes)"),
                limit: self.max_total_size,
            });
        }
        Ok(())
    }

    /// Refuses a manifest of `size` bytes above [`Limits::max_manifest_size`].
    pub fn check_manifest_size(&self, size: u64) -> Result<(), Error> {
        if size > self.max_manifest_size {
            return Err(Error::LimitExceeded {
                what: format!("the manifest ({size} bytes)"),
                limit: self.max_manifest_size,
            });
        }
        Ok(())
    }

    /// Checks one relative slash path against every path rule.
    pub fn check_path(&self, path: &str) -> Result<(), Error> {
        let refuse = |reason: &'static str| Error::UnsafePath {
            path: shown(path),
            reason,
        };
        if path.is_empty() {
            return Err(refuse("empty path"));
        }
        if path.len() > self.max_path_len {
            return Err(refuse("path too long"));
        }
        if path.contains('\\') {
            return Err(refuse("backslash in path"));
        }
        if path.chars().any(char::is_control) {
            return Err(refuse("control character in path"));
        }
        if path.starts_with('/') {
            return Err(refuse("absolute path"));
        }
        let mut depth = 0usize;
        for segment in path.split('/') {
            depth += 1;
            match segment {
                "" => return Err(refuse("empty path segment")),
                "." => return Err(refuse("path is not clean (`.` segment)")),
                ".." => return Err(refuse("parent directory segment `..`")),
                _ => {}
            }
        }
        if depth > self.max_path_depth {
            return Err(refuse("path too deep"));
        }
        Ok(())
    }
}

/// A path as error messages show it: escaped and at most 200 characters.
pub(crate) fn shown(path: &str) -> String {
    let mut out: String = path.chars().take(200).collect();
    if out.len() < path.len() {
        out.push('…');
    }
    out.escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn reason(path: &str) -> Option<&'static str> {
        match Limits::default().check_path(path) {
            Ok(()) => None,
            Err(Error::UnsafePath { reason, .. }) => Some(reason),
            Err(other) => panic!("unexpected error {other}"),
        }
    }

    #[test]
    fn clean_relative_paths_are_accepted() {
        for ok in [
            "a.sql",
            "dir/0001_x.up.sql",
            "a/b/c/d",
            ".ptah-lint.yaml",
            "a..b",
            "...",
            "x/..y",
        ] {
            assert_eq!(reason(ok), None, "{ok}");
        }
    }

    #[test]
    fn every_path_rule_refuses() {
        let cases = [
            ("", "empty path"),
            (".", "path is not clean (`.` segment)"),
            ("./a", "path is not clean (`.` segment)"),
            ("a/./b", "path is not clean (`.` segment)"),
            ("..", "parent directory segment `..`"),
            ("a/../b", "parent directory segment `..`"),
            ("../etc/passwd", "parent directory segment `..`"),
            ("/etc/passwd", "absolute path"),
            ("a//b", "empty path segment"),
            ("a/", "empty path segment"),
            ("a\\b", "backslash in path"),
            ("..\\x", "backslash in path"),
            ("a\0b", "control character in path"),
            ("a\nb", "control character in path"),
        ];
        for (path, want) in cases {
            assert_eq!(reason(path), Some(want), "{path:?}");
        }
    }

    #[test]
    fn length_and_depth_are_bounded() {
        let long = "a".repeat(1025);
        assert_eq!(reason(&long), Some("path too long"));
        assert_eq!(reason(&"a".repeat(1024)), None);
        let deep = vec!["d"; 33].join("/");
        assert_eq!(reason(&deep), Some("path too deep"));
        assert_eq!(reason(&vec!["d"; 32].join("/")), None);
    }

    #[test]
    fn size_limits_name_the_limit() {
        let limits = Limits::default();
        assert!(limits.check_file_size("a", 64 * MIB).is_ok());
        let err = limits.check_file_size("a", 64 * MIB + 1).expect_err("over");
        assert!(matches!(err, Error::LimitExceeded { limit, .. } if limit == 64 * MIB));
        let r = limits.check_total_size(512 * MIB + 1);
        assert!(
            matches!(&r, Err(Error::LimitExceeded { limit, .. }) if *limit == 512 * MIB),
            "{r:?}"
        );
        let r = limits.check_manifest_size(4 * MIB + 1);
        assert!(
            matches!(&r, Err(Error::LimitExceeded { limit, .. }) if *limit == 4 * MIB),
            "{r:?}"
        );
        let r = limits.check_file_count(10_001);
        assert!(
            matches!(&r, Err(Error::LimitExceeded { limit: 10_000, .. })),
            "{r:?}"
        );
        assert!(limits.check_file_count(10_000).is_ok());
    }

    proptest! {
        #[test]
        fn random_paths_never_panic_and_accepted_paths_are_clean(path in "[a-z./\\\\\0 ]{0,40}|\\PC{0,60}") {
            if Limits::default().check_path(&path).is_ok() {
                prop_assert!(!path.is_empty());
                prop_assert!(!path.starts_with('/'));
                prop_assert!(!path.contains('\\'));
                for segment in path.split('/') {
                    prop_assert!(!segment.is_empty() && segment != "." && segment != "..");
                }
                // Joining onto a root never leaves it.
                let joined = std::path::Path::new("/root").join(&path);
                prop_assert!(joined.starts_with("/root"));
                prop_assert!(joined.components().all(|c| !matches!(c, std::path::Component::ParentDir)));
            }
        }
    }
}
