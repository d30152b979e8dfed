//! `ptah.sum`, byte for byte as the reference CLI writes it.
//!
//! ```text
//! h1:<dirhash>
//! <relative path> h1:<base64 sha256 of the file>
//! ```
//! Entries list every migration file sorted by relative path; the directory hash is the sha256 of
//! the concatenation of `"<name> <hash>\n"` over all entries.

use std::collections::BTreeMap;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use ptah_fingerprint::Sha256;

use crate::{Directory, Error};

/// The prefix of every hash in the file.
const H1: &str = "h1:";

/// `h1:` + base64 (standard alphabet, padded) of the sha256 of `bytes`.
pub fn h1(bytes: &[u8]) -> String {
    format!("{H1}{}", STANDARD.encode(Sha256::of(bytes).as_bytes()))
}

/// A computed or parsed sum file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SumFile {
    /// The directory hash, with its `h1:` prefix.
    pub dir_hash: String,
    /// `(relative path, h1 hash)` in path order.
    pub entries: Vec<(String, String)>,
}

impl SumFile {
    /// The sum the reference algorithm computes for `dir`.
    pub fn compute(dir: &Directory) -> SumFile {
        let entries: Vec<(String, String)> = dir
            .files()
            .into_iter()
            .map(|f| (f.path.clone(), h1(&f.bytes)))
            .collect();
        SumFile {
            dir_hash: dir_hash(&entries),
            entries,
        }
    }

    /// The exact text of the file, ending with a newline.
    pub fn render(&self) -> String {
        let mut out = format!("{}\n", self.dir_hash);
        for (name, hash) in &self.entries {
            out.push_str(&format!("{name} {hash}\n"));
        }
        out
    }

    /// Parses a sum file; CRLF and a trailing newline are tolerated, anything else malformed is refused.
    pub fn parse(bytes: &[u8]) -> Result<SumFile, Error> {
        let text = std::str::from_utf8(bytes).map_err(|_| Error::SumMalformed {
            line: 1,
            reason: "not UTF-8".into(),
        })?;
        let text = text.strip_suffix('\n').unwrap_or(text);
        let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
        let malformed = |line: usize, reason: &str| Error::SumMalformed {
            line,
            reason: reason.to_owned(),
        };
        let dir_hash = lines.next().unwrap_or_default().to_owned();
        if !valid_hash(&dir_hash) {
            return Err(malformed(1, "the first line must be h1:<base64 sha256>"));
        }
        let mut entries = Vec::new();
        let mut seen = BTreeMap::new();
        for (i, line) in lines.enumerate() {
            let number = i + 2;
            let (name, hash) = line
                .rsplit_once(' ')
                .ok_or_else(|| malformed(number, "expected `<file> h1:<hash>`"))?;
            if name.is_empty() {
                return Err(malformed(number, "empty file name"));
            }
            if !valid_hash(hash) {
                return Err(malformed(number, "malformed hash"));
            }
            if seen.insert(name.to_owned(), number).is_some() {
                return Err(malformed(number, &format!("duplicate entry for {name}")));
            }
            entries.push((name.to_owned(), hash.to_owned()));
        }
        Ok(SumFile { dir_hash, entries })
    }

    /// Compares a parsed file with the directory; `SumDrift` names what differs.
    pub fn verify(&self, actual: &SumFile) -> Result<(), Error> {
        let recorded: BTreeMap<&str, &str> = self
            .entries
            .iter()
            .map(|(n, h)| (n.as_str(), h.as_str()))
            .collect();
        let found: BTreeMap<&str, &str> = actual
            .entries
            .iter()
            .map(|(n, h)| (n.as_str(), h.as_str()))
            .collect();
        let mut problems = Vec::new();
        for (name, hash) in &found {
            match recorded.get(name) {
                None => problems.push(format!("added {name}")),
                Some(h) if h != hash => problems.push(format!("changed {name}")),
                Some(_) => {}
            }
        }
        for name in recorded.keys().filter(|n| !found.contains_key(*n)) {
            problems.push(format!("removed {name}"));
        }
        if problems.is_empty() && self.dir_hash != dir_hash(&self.entries) {
            problems.push("the directory hash does not match the entries".into());
        }
        if problems.is_empty() && self.entries != actual.entries {
            problems.push("entries are not in path order".into());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::SumDrift {
                summary: problems.join(", "),
            })
        }
    }
}

/// How a directory's integrity was established.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SumCheck {
    /// `ptah.sum` exists and matches every file.
    Verified,
    /// There is no `ptah.sum` (allowed unless required).
    Absent,
}

/// Verifies `dir` against its `ptah.sum`: malformed is a usage error, a mismatch is drift.
pub fn verify_directory(dir: &Directory, required: bool) -> Result<SumCheck, Error> {
    match dir.sum_bytes() {
        None if required => Err(Error::SumMissing {
            dir: dir.root().to_owned(),
        }),
        None => Ok(SumCheck::Absent),
        Some(bytes) => {
            SumFile::parse(bytes)?.verify(&SumFile::compute(dir))?;
            Ok(SumCheck::Verified)
        }
    }
}

fn dir_hash(entries: &[(String, String)]) -> String {
    let mut all = String::new();
    for (name, hash) in entries {
        all.push_str(&format!("{name} {hash}\n"));
    }
    h1(all.as_bytes())
}

fn valid_hash(text: &str) -> bool {
    text.strip_prefix(H1)
        .and_then(|b64| STANDARD.decode(b64).ok())
        .is_some_and(|raw| raw.len() == 32)
}
