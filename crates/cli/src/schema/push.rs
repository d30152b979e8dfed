//! `ptah schema push`: publish a desired schema as one canonical `schema.hcl` artifact.
//!
//! The artifact must be deterministic (equal schemas, equal digests) and lossless, so the document
//! is rendered, read back and rendered again, and refused unless both renderings are identical
//! and the read-back model equals the source. Reference rows are refused: a schema artifact
//! carries structure, and row values travel only in plan bytes.

use std::path::PathBuf;

use ptah_artifact::{Kind, media::SCHEMA_FILE};
use ptah_schema::{Dialect, Schema, read, write::hcl::to_hcl};

use crate::{
    common::{EXIT_USAGE, Output},
    oci,
};

/// Arguments of `schema push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    #[command(flatten)]
    common: oci::Common,
    /// The desired schema: a `.hcl` file, a `.sql` file, or a directory of `.sql` files.
    #[arg(long, visible_alias = "schema-file", env = "PTAH_SCHEMA_FROM")]
    from: PathBuf,
    /// The SQL dialect the schema is written for.
    #[arg(long, value_enum)]
    dialect: DialectArg,
}

/// `--dialect` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DialectArg {
    /// PostgreSQL.
    Postgres,
    /// MySQL and MariaDB.
    Mysql,
}

impl From<DialectArg> for Dialect {
    fn from(d: DialectArg) -> Dialect {
        match d {
            DialectArg::Postgres => Dialect::Postgres,
            DialectArg::Mysql => Dialect::Mysql,
        }
    }
}

/// Renders, proves and pushes the schema; returns the exit code.
pub async fn push(args: PushArgs) -> u8 {
    let out = Output {
        format: args.common.format,
        command: "schema push",
    };
    match canonical_document(args.dialect.into(), &args.from) {
        Ok(hcl) => {
            let files = vec![(SCHEMA_FILE.to_owned(), hcl.into_bytes())];
            oci::push_files(&args.common, Kind::Schema, files, out).await
        }
        Err((code, message)) => out.error(code, &message, EXIT_USAGE),
    }
}

/// The canonical `schema.hcl` for the schema at `path`, or `(code, message)` when it cannot be one.
fn canonical_document(dialect: Dialect, path: &std::path::Path) -> Result<String, (&'static str, String)> {
    let schema = read::from_path(dialect, path).map_err(|e| ("invalid_schema", e.to_string()))?;
    if schema.is_empty() {
        return Err((super::EMPTY_SCHEMA, super::empty_schema_message(path)));
    }
    if let Some(table) = schema.tables.values().find(|t| t.rows.is_some()) {
        return Err((
            "managed_data",
            format!(
                "table {} declares reference rows; schema artifacts carry no row data",
                table.name
            ),
        ));
    }
    let hcl = to_hcl(dialect, &schema);
    let reread: Schema = read::hcl::parse(dialect, SCHEMA_FILE, &hcl).map_err(|e| {
        (
            "not_canonical",
            format!("the rendered schema.hcl does not read back: {e}"),
        )
    })?;
    if reread != schema || to_hcl(dialect, &reread) != hcl {
        return Err((
            "not_canonical",
            "the rendered schema.hcl does not read back to the same schema".to_owned(),
        ));
    }
    Ok(hcl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn sql_and_its_hcl_rendering_give_the_same_document() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sql = write(
            dir.path(),
            "schema.sql",
            "CREATE TABLE items (id bigint PRIMARY KEY, name varchar(64) NOT NULL UNIQUE);\n\
             CREATE INDEX items_name_idx ON items (lower(name));",
        );
        let from_sql = canonical_document(Dialect::Postgres, &sql).expect("canonical");
        assert!(
            from_sql.contains("table \"items\" {") && from_sql.contains("items_name_idx"),
            "{from_sql}"
        );
        let hcl = write(dir.path(), "schema.hcl", &from_sql);
        assert_eq!(
            canonical_document(Dialect::Postgres, &hcl).expect("canonical"),
            from_sql
        );
    }

    #[test]
    fn bad_documents_are_refused_with_a_code() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bad = write(
            dir.path(),
            "bad.sql",
            "CREATE RULE r AS ON INSERT TO t DO INSTEAD NOTHING;",
        );
        let (code, message) = canonical_document(Dialect::Postgres, &bad).expect_err("rules are refused");
        assert_eq!(code, "invalid_schema");
        assert!(message.contains("bad.sql"), "{message}");
    }

    #[test]
    fn an_empty_document_is_refused_not_pushed() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in [
            ("empty.sql", ""),
            ("comments.sql", "-- nothing yet\nSET lock_timeout = 0;\n"),
        ] {
            let path = write(dir.path(), name, text);
            let (code, message) = canonical_document(Dialect::Postgres, &path).expect_err("empty is refused");
            assert_eq!(code, "empty_schema", "{name}");
            assert!(message.contains(name), "{message}");
        }
    }
}
