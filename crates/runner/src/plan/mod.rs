//! The approved plan of a schema Apply: read from `PTAH_PLAN_FILE` (one file, or a directory of
//! chunks), bounded, checked against the approved digest, and copied into the work directory so
//! `ptah` applies exactly the bytes that were checked.
//!
//! A directory is the Apply Job's projected volume of plan ConfigMaps, laid out by kubelet's
//! AtomicWriter: the payload lives in a hidden timestamped directory, `..data` is a symlink to
//! it, and every visible name is a symlink through `..data`:
//!
//! ```text
//! plan/..2026_11_29_10_00_00.123456789/000.plan   (regular file)
//! plan/..data     -> ..2026_11_29_10_00_00.123456789
//! plan/000.plan   -> ..data/000.plan
//! ```
//!
//! A plain directory of regular `NNN.plan` files is accepted too. Anything else (a gap in the
//! numbering, an extra entry, a symlink elsewhere, a non-regular file, too many chunks or too
//! many bytes) is refused before the child starts.

use std::{
    collections::BTreeMap,
    fs::File,
    io::Read,
    path::{Path, PathBuf},
};

use ptah_dataplane::env::{self, MAX_PLAN_CHUNKS, plan_chunk_name};
use ptah_fingerprint::Digest;

use crate::{error::RunnerError, inputs::Env};

/// The name of kubelet's symlink to the current payload directory.
const DATA_LINK: &str = "..data";

/// Why a plan location was refused. Every variant becomes an `invalid_input` on `PTAH_PLAN_FILE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanSourceError {
    /// The file or directory cannot be read.
    #[error("cannot be read: {0}")]
    Unreadable(String),
    /// The plan is larger than the bound.
    #[error("holds more than {max} bytes")]
    TooLarge {
        /// The bound (`--max-plan-bytes`).
        max: usize,
    },
    /// The directory holds no chunk.
    #[error("holds no plan chunk (000.plan)")]
    Empty,
    /// A chunk number is missing below the highest one.
    #[error("has no chunk {missing:03}.plan; chunks must be contiguous from 000.plan")]
    Gap {
        /// The first missing chunk number.
        missing: usize,
    },
    /// More chunks than the contract allows.
    #[error("holds more than {MAX_PLAN_CHUNKS} chunks")]
    TooManyChunks,
    /// An entry that is neither a chunk nor part of the projected-volume layout.
    #[error("holds an unexpected entry {0:?}")]
    Extra(String),
    /// A chunk (or the plan file) is not a regular file reached through the expected layout.
    #[error("entry {0:?} is not a regular file of the projected-volume layout")]
    NotRegular(String),
}

impl From<PlanSourceError> for RunnerError {
    fn from(e: PlanSourceError) -> Self {
        RunnerError::input(env::PLAN_FILE, e.to_string())
    }
}

/// Reads the plan `PTAH_PLAN_FILE` names (at most `max` bytes) and checks it against
/// `PTAH_EXPECTED_PLAN_CONTENT_DIGEST`; returns the checked bytes.
pub fn read_approved(env: &Env, max: usize) -> Result<Vec<u8>, RunnerError> {
    let path = PathBuf::from(
        env.get(env::PLAN_FILE)
            .ok_or_else(|| RunnerError::input(env::PLAN_FILE, "is not set"))?,
    );
    let expected: Digest = env
        .get(env::EXPECTED_PLAN_CONTENT_DIGEST)
        .ok_or_else(|| RunnerError::input(env::EXPECTED_PLAN_CONTENT_DIGEST, "is not set"))?
        .parse()
        .map_err(|_| RunnerError::input(env::EXPECTED_PLAN_CONTENT_DIGEST, "is not sha256:<hex>"))?;
    let bytes = read_source(&path, max)?;
    let actual = Digest::of(&bytes);
    if actual != expected {
        return Err(RunnerError::PlanContentMismatch {
            expected: expected.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok(bytes)
}

/// Writes the checked plan into `work` for the child; returns its path.
pub fn write_copy(work: &Path, bytes: &[u8]) -> Result<PathBuf, RunnerError> {
    let path = work.join("approved.plan");
    std::fs::write(&path, bytes)
        .map_err(|e| RunnerError::Internal(format!("cannot write {}: {}", path.display(), e.kind())))?;
    Ok(path)
}

/// The bytes of a plan file or of a chunk directory concatenated in order, at most `max`.
pub fn read_source(path: &Path, max: usize) -> Result<Vec<u8>, PlanSourceError> {
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if meta.is_dir() {
        let chunks = chunk_files(path)?;
        let mut out = Vec::new();
        for file in chunks {
            read_bounded(&file, max, &mut out)?;
        }
        Ok(out)
    } else {
        let mut out = Vec::new();
        read_bounded(path, max, &mut out)?;
        Ok(out)
    }
}

/// The chunk files of a plan directory in order, each resolved to the regular file that holds it.
pub fn chunk_files(dir: &Path) -> Result<Vec<PathBuf>, PlanSourceError> {
    let mut data_target: Option<String> = None;
    let mut hidden_dirs: Vec<String> = Vec::new();
    // Chunk number → whether the visible entry is a symlink through `..data`.
    let mut chunks: BTreeMap<usize, bool> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let name = entry
            .file_name()
            .into_string()
            .map_err(|n| PlanSourceError::Extra(n.to_string_lossy().into_owned()))?;
        let kind = entry.file_type().map_err(unreadable)?;
        if name == DATA_LINK {
            if !kind.is_symlink() {
                return Err(PlanSourceError::NotRegular(name));
            }
            let target = link_text(&dir.join(&name))?;
            if !is_hidden_dir_name(&target) {
                return Err(PlanSourceError::NotRegular(name));
            }
            data_target = Some(target);
        } else if is_hidden_dir_name(&name) {
            if !kind.is_dir() {
                return Err(PlanSourceError::Extra(name));
            }
            hidden_dirs.push(name);
        } else if let Some(index) = chunk_index(&name) {
            if kind.is_symlink() {
                if link_text(&dir.join(&name))? != format!("{DATA_LINK}/{name}") {
                    return Err(PlanSourceError::NotRegular(name));
                }
                chunks.insert(index, true);
            } else if kind.is_file() {
                chunks.insert(index, false);
            } else {
                return Err(PlanSourceError::NotRegular(name));
            }
        } else {
            return Err(PlanSourceError::Extra(name));
        }
    }
    // The only hidden directory allowed is the one `..data` points at.
    match (&data_target, hidden_dirs.as_slice()) {
        (None, []) => {}
        (Some(target), [only]) if only == target => {}
        (Some(target), []) => return Err(PlanSourceError::NotRegular(target.clone())),
        (_, [first, ..]) => {
            let extra = hidden_dirs
                .iter()
                .find(|d| Some(*d) != data_target.as_ref())
                .unwrap_or(first);
            return Err(PlanSourceError::Extra(extra.clone()));
        }
    }
    if chunks.is_empty() {
        return Err(PlanSourceError::Empty);
    }
    if chunks.len() > MAX_PLAN_CHUNKS || chunks.keys().any(|i| *i >= MAX_PLAN_CHUNKS) {
        return Err(PlanSourceError::TooManyChunks);
    }
    if let Some(missing) = (0..chunks.len()).find(|i| !chunks.contains_key(i)) {
        return Err(PlanSourceError::Gap { missing });
    }
    if let Some(target) = &data_target {
        check_payload_dir(&dir.join(target), &chunks)?;
    } else if chunks.values().any(|linked| *linked) {
        // A chunk links through `..data`, which is not there.
        return Err(PlanSourceError::NotRegular(DATA_LINK.to_owned()));
    }
    Ok(chunks
        .iter()
        .map(|(index, linked)| {
            let name = plan_chunk_name(*index);
            match (&data_target, linked) {
                (Some(target), true) => dir.join(target).join(name),
                _ => dir.join(name),
            }
        })
        .collect())
}

/// The payload directory holds exactly the linked chunks, each a regular file.
fn check_payload_dir(payload: &Path, chunks: &BTreeMap<usize, bool>) -> Result<(), PlanSourceError> {
    let mut seen = 0;
    for entry in std::fs::read_dir(payload).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        match chunk_index(&name) {
            Some(index) if chunks.get(&index) == Some(&true) => {
                if !entry.file_type().map_err(unreadable)?.is_file() {
                    return Err(PlanSourceError::NotRegular(name));
                }
                seen += 1;
            }
            _ => return Err(PlanSourceError::Extra(name)),
        }
    }
    if seen != chunks.values().filter(|linked| **linked).count() {
        return Err(PlanSourceError::NotRegular(
            "a chunk link without its file".to_owned(),
        ));
    }
    Ok(())
}

/// Appends the regular file at `path` to `out`, refusing when `out` would exceed `max` bytes.
fn read_bounded(path: &Path, max: usize, out: &mut Vec<u8>) -> Result<(), PlanSourceError> {
    let file = File::open(path).map_err(unreadable)?;
    // Checked on the opened file, so what was checked is what is read.
    if !file.metadata().map_err(unreadable)?.is_file() {
        return Err(PlanSourceError::NotRegular(display_name(path)));
    }
    let room = max.saturating_sub(out.len()) as u64;
    file.take(room + 1).read_to_end(out).map_err(unreadable)?;
    if out.len() > max {
        return Err(PlanSourceError::TooLarge { max });
    }
    Ok(())
}

/// `NNN.plan` → `NNN`, for exactly three ASCII digits.
fn chunk_index(name: &str) -> Option<usize> {
    let digits = name.strip_suffix(".plan")?;
    if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// AtomicWriter's payload directories are `..<timestamp>`: hidden, one component, not `..data`.
fn is_hidden_dir_name(name: &str) -> bool {
    name.len() > 2 && name.starts_with("..") && !name.starts_with(DATA_LINK) && !name.contains('/')
}

fn link_text(path: &Path) -> Result<String, PlanSourceError> {
    let target = std::fs::read_link(path).map_err(unreadable)?;
    target
        .into_os_string()
        .into_string()
        .map_err(|_| PlanSourceError::NotRegular(display_name(path)))
}

fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn unreadable(e: std::io::Error) -> PlanSourceError {
    PlanSourceError::Unreadable(e.kind().to_string())
}

#[cfg(test)]
mod tests;
