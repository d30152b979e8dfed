//! `matrix/databases.json`: the database images the kind provider runs (`engines[].kind`).
//!
//! Each `kind` entry names an `image` (a tag) and a `digest` (`sha256:…`, or `null` while
//! nobody has pinned it). A pinned entry runs as `image@digest`; an unpinned one runs by its tag,
//! with a warning, because a tag can move under a re-run.

use std::{fs, path::Path};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::services::Engine;

/// The file under the workspace root.
pub const DATABASES_FILE: &str = "matrix/databases.json";

/// One `engines[].kind` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindImage {
    /// `postgres:17-alpine`
    pub image: String,
    /// `sha256:…`, when pinned.
    pub digest: Option<String>,
}

impl KindImage {
    /// `image@digest` when pinned, else the tag alone.
    pub fn reference(&self) -> String {
        match &self.digest {
            Some(digest) => format!("{}@{digest}", self.image),
            None => self.image.clone(),
        }
    }

    /// The warning to print when the image is not pinned.
    pub fn warning(&self) -> Option<String> {
        self.digest.is_none().then(|| {
            format!(
                "warning: {} has no digest in {DATABASES_FILE}: running the tag, which may move",
                self.image
            )
        })
    }
}

/// The `engine` value of the row for `engine` (MariaDB stands in for the MySQL row locally).
pub fn row_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Postgres => "PostgreSQL",
        Engine::Mariadb => "MySQL",
    }
}

/// Reads the kind image of `engine` from `matrix/databases.json` under `root`.
pub fn load(root: &Path, engine: Engine) -> anyhow::Result<KindImage> {
    let path = root.join(DATABASES_FILE);
    let text = fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    parse(&text, engine).with_context(|| format!("in {}", path.display()))
}

/// Finds the kind image of `engine` in the file's text.
pub fn parse(text: &str, engine: Engine) -> anyhow::Result<KindImage> {
    let json: Value = serde_json::from_str(text).context("not JSON")?;
    let name = row_name(engine);
    let row = json["engines"]
        .as_array()
        .context("`engines` is not an array")?
        .iter()
        .find(|row| row["engine"] == name)
        .with_context(|| format!("no engine {name:?}"))?;
    let kind = &row["kind"];
    let image = kind["image"]
        .as_str()
        .with_context(|| format!("{name}: `kind.image` is missing or not a string"))?
        .to_owned();
    let digest = match &kind["digest"] {
        Value::Null => None,
        Value::String(digest) if is_digest(digest) => Some(digest.clone()),
        other => bail!("{name}: `kind.digest` must be null or \"sha256:<64 hex digits>\", not {other}"),
    };
    Ok(KindImage { image, digest })
}

fn is_digest(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::workspace_root;

    #[test]
    fn the_repository_file_names_postgresql_17_and_mysql_8_4() {
        let pg = load(&workspace_root(), Engine::Postgres).expect("postgres");
        assert!(pg.image.starts_with("postgres:17"), "{pg:?}");
        let mysql = load(&workspace_root(), Engine::Mariadb).expect("mysql");
        assert!(mysql.image.starts_with("mysql:8.4"), "{mysql:?}");
    }

    #[test]
    fn a_digest_pins_the_reference_and_null_warns() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let text = format!(
            r#"{{"engines":[{{"engine":"PostgreSQL","kind":{{"image":"postgres:17","digest":"{digest}"}}}},
                {{"engine":"MySQL","kind":{{"image":"mysql:8.4","digest":null}}}}]}}"#
        );
        let pg = parse(&text, Engine::Postgres).expect("pg");
        assert_eq!(pg.reference(), format!("postgres:17@{digest}"));
        assert_eq!(pg.warning(), None);
        let mysql = parse(&text, Engine::Mariadb).expect("mysql");
        assert_eq!(mysql.reference(), "mysql:8.4");
        assert!(mysql.warning().expect("warning").contains("no digest"));
    }

    #[test]
    fn refuses_a_malformed_digest_and_a_missing_row() {
        let bad = r#"{"engines":[{"engine":"PostgreSQL","kind":{"image":"p","digest":"latest"}}]}"#;
        assert!(format!("{:#}", parse(bad, Engine::Postgres).expect_err("bad")).contains("sha256"));
        assert_eq!(
            parse(bad, Engine::Mariadb).err().map(|e| e.to_string()),
            Some("no engine \"MySQL\"".to_owned())
        );
        // A missing `digest` field counts as unpinned.
        let missing = r#"{"engines":[{"engine":"MySQL","kind":{"image":"mysql:8.4"}}]}"#;
        assert_eq!(parse(missing, Engine::Mariadb).expect("missing").digest, None);
    }
}
