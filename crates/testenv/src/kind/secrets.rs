//! The generated secrets of a kind cluster's services, stored one file per secret (mode 0600)
//! so that a kept cluster keeps them; every value redacts itself in `Debug`.

use std::{fs, os::unix::fs::DirBuilderExt, path::Path};

use anyhow::Context;
use ptah_testservices::Password;

use crate::services::secret;

/// The generated secrets of a cluster's services; `Debug` prints `"***"` for each.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// The `postgres` superuser's password.
    pub postgres_admin: Password,
    /// The `app` role's password.
    pub postgres_app: Password,
    /// MySQL's `root` password.
    pub mysql_root: Password,
    /// MySQL's `app` user's password.
    pub mysql_app: Password,
    /// The TLS registry's basic-auth password.
    pub registry: Password,
    /// The registry's HTTP secret (signs upload state).
    pub registry_http_secret: Password,
}

const CREDENTIAL_FILES: [&str; 6] = [
    "postgres-admin",
    "postgres-app",
    "mysql-root",
    "mysql-app",
    "registry",
    "registry-http-secret",
];

impl Credentials {
    /// Fresh random passwords.
    pub fn generate() -> anyhow::Result<Self> {
        Ok(Self {
            postgres_admin: fresh_password()?,
            postgres_app: fresh_password()?,
            mysql_root: fresh_password()?,
            mysql_app: fresh_password()?,
            registry: fresh_password()?,
            registry_http_secret: fresh_password()?,
        })
    }

    /// Every secret, so that checks can assert none of them leaks.
    pub fn fields(&self) -> [&Password; 6] {
        [
            &self.postgres_admin,
            &self.postgres_app,
            &self.mysql_root,
            &self.mysql_app,
            &self.registry,
            &self.registry_http_secret,
        ]
    }

    /// Writes one file per secret into `dir` (created, mode 0700; files 0600).
    pub fn store(&self, dir: &Path) -> anyhow::Result<()> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        for (file, value) in CREDENTIAL_FILES.iter().zip(self.fields()) {
            write_private(&dir.join(file), value.expose())?;
        }
        Ok(())
    }

    /// Reads what [`Credentials::store`] wrote.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        let read = |file: &str| -> anyhow::Result<Password> {
            let path = dir.join(file);
            let text =
                fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
            Ok(Password::new(text.trim()))
        };
        let [pa, pp, mr, ma, r, rh] = CREDENTIAL_FILES;
        Ok(Self {
            postgres_admin: read(pa)?,
            postgres_app: read(pp)?,
            mysql_root: read(mr)?,
            mysql_app: read(ma)?,
            registry: read(r)?,
            registry_http_secret: read(rh)?,
        })
    }
}

/// Writes `text` to `path` with mode 0600 (replacing it).
pub fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    secret::write(path, text)
}

/// A fresh random alphanumeric password of 24 characters, safe in URLs and env files as is.
pub fn fresh_password() -> anyhow::Result<Password> {
    secret::password().map(Password::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_credentials_redacts_every_value_and_a_stored_set_reads_back() {
        let creds = Credentials::generate().expect("credentials");
        let debug = format!("{creds:?}");
        for secret in creds.fields() {
            assert!(!debug.contains(secret.expose()), "{debug}");
        }
        let dir = std::env::temp_dir().join(format!("ptah-kind-creds-{}", std::process::id()));
        creds.store(&dir).expect("store");
        let back = Credentials::load(&dir).expect("load");
        assert_eq!(back.registry, creds.registry);
        let mode = fs::metadata(dir.join("registry")).expect("file").permissions();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o077, 0);
        fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn passwords_are_alphanumeric_long_and_different() {
        let a = fresh_password().expect("a");
        assert_eq!(a.expose().len(), 24);
        assert!(a.expose().bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(a, fresh_password().expect("b"));
    }
}
