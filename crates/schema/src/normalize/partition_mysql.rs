//! MySQL/MariaDB partitioning in one canonical text, shared by the dump reader and the inspector:
//! what `SHOW CREATE TABLE` says, rebuilt from its parts (`information_schema.PARTITIONS` on the
//! catalog side), so that a dump, a hand-written clause and the catalog compare equal:
//!
//! ```text
//! PARTITION BY RANGE (year(`at`)) (PARTITION `p2024` VALUES LESS THAN (2025), PARTITION `pmax` VALUES LESS THAN MAXVALUE)
//! PARTITION BY LIST COLUMNS (`region`) (PARTITION `eu` VALUES IN ('de','fr'))
//! PARTITION BY HASH (`id`) PARTITIONS 4
//! ```
//!
//! Expressions and values are canonical ([`super::expression`]); a HASH or KEY partitioning whose
//! partitions have the server's default names (`p0`, `p1`, …) is written with `PARTITIONS n`.

use crate::model::Dialect;

/// One partitioning, in parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MysqlPartitioning {
    /// `RANGE`, `LIST`, `RANGE COLUMNS`, `LIST COLUMNS`, `HASH`, `LINEAR HASH`, `KEY`, `LINEAR KEY`.
    pub method: String,
    /// The expression or column list between the parentheses, as written or as the catalog has it.
    pub expression: String,
    /// The partitions in order: name and `VALUES` description (`2025`, `MAXVALUE`, `'a','b'`).
    pub partitions: Vec<(String, Option<String>)>,
}

impl MysqlPartitioning {
    /// The canonical text.
    pub fn text(&self) -> String {
        let method = self
            .method
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_uppercase();
        let mut out = format!("PARTITION BY {method} ({})", list(&self.expression));
        let hashed = method.ends_with("HASH") || method.ends_with("KEY");
        let default_names = self
            .partitions
            .iter()
            .enumerate()
            .all(|(i, (name, values))| *name == format!("p{i}") && values.is_none());
        if hashed && default_names {
            out.push_str(&format!(" PARTITIONS {}", self.partitions.len()));
            return out;
        }
        let parts: Vec<String> = self
            .partitions
            .iter()
            .map(|(name, values)| {
                let name = super::mysql_quote(name);
                match values.as_deref().map(list) {
                    None => format!("PARTITION {name}"),
                    Some(v) if v == "MAXVALUE" => format!("PARTITION {name} VALUES LESS THAN MAXVALUE"),
                    Some(v) if method.starts_with("RANGE") => {
                        format!("PARTITION {name} VALUES LESS THAN ({v})")
                    }
                    Some(v) => format!("PARTITION {name} VALUES IN ({v})"),
                }
            })
            .collect();
        if !parts.is_empty() {
            out.push_str(&format!(" ({})", parts.join(", ")));
        }
        out
    }
}

/// A comma-separated list of expressions (or one), each canonical, joined with `,`; `MAXVALUE`
/// stays uppercase.
fn list(text: &str) -> String {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None::<u8>, 0);
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match (quote, b[i]) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), b'\\') => i += 1,
            (Some(_), _) => {}
            (None, c @ (b'\'' | b'"' | b'`')) => quote = Some(c),
            (None, b'(') => depth += 1,
            (None, b')') => depth = depth.saturating_sub(1),
            (None, b',') if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    items.push(&text[start..]);
    items
        .iter()
        .map(|item| {
            let item = item.trim();
            if item.eq_ignore_ascii_case("MAXVALUE") {
                "MAXVALUE".to_owned()
            } else {
                super::expression(Dialect::Mysql, item)
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_and_a_dump_write_the_same_text() {
        let written = MysqlPartitioning {
            method: "range".to_owned(),
            expression: "YEAR(at)".to_owned(),
            partitions: vec![
                ("p2024".to_owned(), Some("2025".to_owned())),
                ("pmax".to_owned(), Some("maxvalue".to_owned())),
            ],
        };
        let catalog = MysqlPartitioning {
            method: "RANGE".to_owned(),
            expression: "year(`at`)".to_owned(),
            partitions: vec![
                ("p2024".to_owned(), Some("2025".to_owned())),
                ("pmax".to_owned(), Some("MAXVALUE".to_owned())),
            ],
        };
        assert_eq!(written.text(), catalog.text());
        assert_eq!(
            catalog.text(),
            "PARTITION BY RANGE (year(`at`)) (PARTITION `p2024` VALUES LESS THAN (2025), PARTITION `pmax` VALUES LESS THAN MAXVALUE)"
        );
        let hash = MysqlPartitioning {
            method: "HASH".to_owned(),
            expression: "`id`".to_owned(),
            partitions: (0..3).map(|i| (format!("p{i}"), None)).collect(),
        };
        assert_eq!(hash.text(), "PARTITION BY HASH (`id`) PARTITIONS 3");
        let listed = MysqlPartitioning {
            method: "LIST COLUMNS".to_owned(),
            expression: "`region`".to_owned(),
            partitions: vec![("eu".to_owned(), Some("'de', 'fr'".to_owned()))],
        };
        assert_eq!(
            listed.text(),
            "PARTITION BY LIST COLUMNS (`region`) (PARTITION `eu` VALUES IN ('de','fr'))"
        );
    }
}
