//! `--install-to PATH`: copy this executable for an init container to share it.

use std::{
    fs::OpenOptions,
    io,
    os::unix::fs::{OpenOptionsExt, PermissionsExt},
    path::Path,
};

/// Copies the running executable to `to` with mode 0755; refuses when `to` exists.
pub fn install_to(to: &Path) -> io::Result<u64> {
    let me = std::env::current_exe()?;
    let mut from = std::fs::File::open(me)?;
    let mut dest = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(to)?;
    let n = io::copy(&mut from, &mut dest)?;
    dest.sync_all()?;
    // The umask may have narrowed the mode given at creation.
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755))?;
    Ok(n)
}
