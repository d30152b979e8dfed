//! Values that hold a password and therefore redact themselves in `Debug`.

use std::fmt;

/// A password. `Debug` prints `"***"`; use [`Password::expose`] to get the text.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Wraps a password.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The password itself; never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"***\"")
    }
}

/// A connection URL with a password in its user info (`scheme://user:password@host/db`).
/// `Debug` and `Display` replace the password with `***`; use [`SecretUrl::expose`] to connect.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(String);

impl SecretUrl {
    /// Wraps a URL.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The full URL, password included; never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL with the password replaced by `***`.
    pub fn redacted(&self) -> String {
        match self.password_range() {
            Some((start, end)) => format!("{}***{}", &self.0[..start], &self.0[end..]),
            None => self.0.clone(),
        }
    }

    /// The same URL with its path (the database name) replaced by `database`; a query string is
    /// kept.
    pub fn with_database(&self, database: &str) -> Self {
        let authority_start = self.0.find("://").map_or(0, |i| i + 3);
        let rest = &self.0[authority_start..];
        let query = rest.find('?').map_or("", |i| &rest[i..]);
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        Self(format!(
            "{}{}/{database}{query}",
            &self.0[..authority_start],
            &rest[..authority_end]
        ))
    }

    /// The same URL pointed at another `host:port` (a proxy in front of the server); the
    /// credentials, database and query string are kept.
    pub fn via(&self, address: &str) -> Self {
        let authority_start = self.0.find("://").map_or(0, |i| i + 3);
        let rest = &self.0[authority_start..];
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let host_start = rest[..authority_end].rfind('@').map_or(0, |at| at + 1);
        Self(format!(
            "{}{}{address}{}",
            &self.0[..authority_start],
            &rest[..host_start],
            &rest[authority_end..]
        ))
    }

    /// Byte range of the password inside the URL, if it has one.
    fn password_range(&self) -> Option<(usize, usize)> {
        let authority_start = self.0.find("://")? + 3;
        let rest = &self.0[authority_start..];
        let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let at = rest[..authority_len].rfind('@')?;
        let colon = rest[..at].find(':')?;
        Some((authority_start + colon + 1, authority_start + at))
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.redacted(), f)
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_only_the_password() {
        let url = SecretUrl::new("postgres://app:s3cret@127.0.0.1:5432/app?sslmode=disable");
        assert_eq!(
            url.redacted(),
            "postgres://app:***@127.0.0.1:5432/app?sslmode=disable"
        );
        assert_eq!(format!("{url}"), url.redacted());
        assert!(!format!("{url:?}").contains("s3cret"));
        assert_eq!(
            SecretUrl::new("mysql://app@h:1/db").redacted(),
            "mysql://app@h:1/db"
        );
    }

    #[test]
    fn password_debug_is_stars() {
        assert_eq!(format!("{:?}", Password::new("pw")), "\"***\"");
        assert_eq!(Password::new("pw").expose(), "pw");
    }

    #[test]
    fn replaces_the_database_and_keeps_the_query() {
        let url = SecretUrl::new("postgres://u:p@h:1/app?sslmode=disable");
        assert_eq!(
            url.with_database("t_9").expose(),
            "postgres://u:p@h:1/t_9?sslmode=disable"
        );
        assert_eq!(
            SecretUrl::new("mysql://u:p@h:1").with_database("x").expose(),
            "mysql://u:p@h:1/x"
        );
    }
}
