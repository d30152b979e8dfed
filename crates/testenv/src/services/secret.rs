//! Random passwords and files only root may read.

use std::{
    fs,
    io::{Read, Write},
    os::unix::fs::OpenOptionsExt,
    path::Path,
};

use anyhow::Context;

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LENGTH: usize = 24;

/// A fresh random alphanumeric password (24 characters, about 143 bits), safe in URLs as is.
pub fn password() -> anyhow::Result<String> {
    let mut urandom = fs::File::open("/dev/urandom").context("cannot open /dev/urandom")?;
    let mut out = String::with_capacity(LENGTH);
    let mut buf = [0u8; 64];
    while out.len() < LENGTH {
        urandom.read_exact(&mut buf).context("cannot read /dev/urandom")?;
        out.extend(pick(&buf).take(LENGTH - out.len()));
    }
    Ok(out)
}

/// Maps random bytes to the alphabet without bias: bytes at or above the largest multiple of the
/// alphabet size are dropped.
fn pick(bytes: &[u8]) -> impl Iterator<Item = char> + '_ {
    let limit = 256 - 256 % ALPHABET.len();
    bytes
        .iter()
        .filter(move |b| usize::from(**b) < limit)
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
}

/// Writes `value` to a new file with mode 0600, replacing any file there (an existing file
/// would keep its own mode).
pub fn write(path: &Path, value: &str) -> anyhow::Result<()> {
    let _ = fs::remove_file(path);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(value.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Reads a secret written by [`write`].
pub fn read(path: &Path) -> anyhow::Result<String> {
    let value = fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(value.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_alphanumeric_long_and_different() {
        let a = password().expect("password");
        let b = password().expect("password");
        assert_eq!(a.len(), LENGTH);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn bytes_past_the_last_full_alphabet_round_are_dropped() {
        let picked: String = pick(&[0, 61, 62, 247, 248, 255]).collect();
        assert_eq!(picked, "A9A9");
    }
}
