//! PostgreSQL column collations as the catalog names them.

/// A PostgreSQL collation named by its parts (`pg_catalog."C"` is `["pg_catalog", "C"]`): the
/// unqualified name, or `None` for `default` (the type's own). Only `pg_catalog`'s collations are
/// modelled, since a collation name may hold dots itself (`en_US.utf8`); another schema is `Err`
/// with the name as written.
pub fn postgres_collation(parts: &[String]) -> Result<Option<String>, String> {
    let name = match parts {
        [name] => name,
        [schema, name] if schema == "pg_catalog" => name,
        _ => return Err(parts.join(".")),
    };
    Ok((name != "default").then(|| name.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn pg_catalog_and_unqualified_names_are_the_same_collation() {
        assert_eq!(
            postgres_collation(&parts(&["pg_catalog", "C"])),
            Ok(Some("C".to_owned()))
        );
        assert_eq!(
            postgres_collation(&parts(&["en_US.utf8"])),
            Ok(Some("en_US.utf8".to_owned()))
        );
        assert_eq!(postgres_collation(&parts(&["default"])), Ok(None));
        assert_eq!(postgres_collation(&parts(&["pg_catalog", "default"])), Ok(None));
        assert_eq!(
            postgres_collation(&parts(&["public", "german"])),
            Err("public.german".to_owned())
        );
    }
}
