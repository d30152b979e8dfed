//! Column types as SQL authors and catalogs spell them, folded into the canonical [`DataType`].
//!
//! PostgreSQL input is what `format_type()` prints (`character varying(255)`,
//! `timestamp(3) with time zone`, `integer[]`) and what authors write (`varchar(255)`,
//! `timestamptz(3)`, `int4`, `serial`); MySQL input is `information_schema.COLUMNS.COLUMN_TYPE`
//! (`int(11) unsigned`, `tinyint(1)`, `enum('a','b')`) and what authors write.
//!
//! **User types.** A name that is not a built-in type is a user type. [`parse_type`] never guesses
//! that it is an enum: it returns [`DataType::Other`] with the name as written (unquoted parts
//! lowercased, quoted parts kept with their quotes, schema and name joined by `.`).
//! [`parse_type_with`] takes a resolver: when it maps the user type's (schema, name) to an enum,
//! the result is [`DataType::Enum`]. Readers resolve against the enums the document declares; an
//! engine resolves against `pg_type`.

use thiserror::Error;

use crate::model::{DataType, Dialect, QualifiedName};

mod lex;

use lex::{Part, lex};

/// Why a type's text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TypeError {
    /// The text is empty.
    #[error("empty type")]
    Empty,
    /// The text is not a type expression (bad token, unbalanced parentheses…).
    #[error("cannot read type {text:?}: {reason}")]
    Syntax {
        /// The text as given.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// A parameter that must be a number is not, or is out of range.
    #[error("type {text:?}: bad parameter {param:?}")]
    BadParameter {
        /// The text as given.
        text: String,
        /// The parameter.
        param: String,
    },
}

/// Maps a user type's optional schema and name to the enum it names, if it is one.
pub type EnumResolver<'a> = &'a dyn Fn(Option<&str>, &str) -> Option<QualifiedName>;

/// Reads a type; user types become [`DataType::Other`] (see the module docs).
pub fn parse_type(dialect: Dialect, text: &str) -> Result<DataType, TypeError> {
    parse_type_with(dialect, text, &|_, _| None)
}

/// Reads a type, asking `enums` whether a user type names an enum.
pub fn parse_type_with(dialect: Dialect, text: &str, enums: EnumResolver<'_>) -> Result<DataType, TypeError> {
    let mut parsed = lex(text)?;
    if parsed.words.is_empty() {
        return Err(TypeError::Empty);
    }
    if dialect == Dialect::Postgres {
        // A dump qualifies every type (its `search_path` is empty); `public.citext` and
        // `pg_catalog.int4` are what the catalog, read on the default path, calls `citext`, `int4`.
        for part in &mut parsed.words {
            let prefix = part.text.split_once('.').map(|(schema, _)| schema.to_owned());
            if let Some(schema @ ("public" | "pg_catalog")) = prefix.as_deref() {
                part.text = part.text[schema.len() + 1..].to_owned();
                if schema == "pg_catalog" {
                    part.schema = None;
                }
            }
        }
    }
    if dialect == Dialect::Postgres {
        // PostgreSQL keeps no array dimensions or bounds: `integer[][]`, `integer[3]`, `integer
        // ARRAY` and `integer ARRAY[3]` are all the `integer[]` that `format_type` prints.
        let trailing_array = parsed.words.len() > 1
            && parsed
                .words
                .last()
                .is_some_and(|w| w.schema.is_none() && w.text == "array");
        if trailing_array {
            parsed.words.pop();
            parsed.array_dims = parsed.array_dims.max(1);
        }
        parsed.array_dims = parsed.array_dims.min(1);
    }
    let mut base = match dialect {
        Dialect::Postgres => postgres(text, &parsed, enums)?,
        Dialect::Mysql => mysql(text, &parsed, enums)?,
    };
    for _ in 0..parsed.array_dims {
        base = DataType::Array(Box::new(base));
    }
    Ok(base)
}

/// A type's lexed shape: its words, the one parenthesized parameter list and array suffixes.
pub(crate) struct Parsed {
    /// Words in order; quoted identifiers keep their quotes.
    pub words: Vec<Part>,
    /// The parameters, when a `( … )` group was present.
    pub params: Option<Vec<String>>,
    /// How many `[]` suffixes follow.
    pub array_dims: usize,
}

impl Parsed {
    fn key(&self) -> String {
        let plain: Vec<&str> = self.words.iter().map(Part::text).collect();
        plain.join(" ")
    }
}

fn number(text: &str, param: &str) -> Result<u32, TypeError> {
    param.trim().parse().map_err(|_| TypeError::BadParameter {
        text: text.to_owned(),
        param: param.to_owned(),
    })
}

fn one(text: &str, params: &Option<Vec<String>>) -> Result<Option<u32>, TypeError> {
    match params.as_deref() {
        None => Ok(None),
        Some([p]) => number(text, p).map(Some),
        Some(_) => Err(TypeError::Syntax {
            text: text.to_owned(),
            reason: "expected one parameter".to_owned(),
        }),
    }
}

fn two(text: &str, params: &Option<Vec<String>>) -> Result<(Option<u32>, Option<u32>), TypeError> {
    match params.as_deref() {
        None => Ok((None, None)),
        Some([p]) => Ok((Some(number(text, p)?), None)),
        Some([p, s]) => Ok((Some(number(text, p)?), Some(number(text, s)?))),
        Some(_) => Err(TypeError::Syntax {
            text: text.to_owned(),
            reason: "expected at most two parameters".to_owned(),
        }),
    }
}

fn other(parsed: &Parsed) -> DataType {
    DataType::Other {
        name: parsed.key(),
        params: parsed.params.clone().unwrap_or_default(),
    }
}

fn user_type(parsed: &Parsed, enums: EnumResolver<'_>) -> DataType {
    if parsed.params.is_none()
        && let [one] = parsed.words.as_slice()
        && let Some(q) = enums(one.schema.as_deref(), &one.value)
    {
        return DataType::Enum(q);
    }
    other(parsed)
}

fn int(bits: u8, unsigned: bool) -> DataType {
    DataType::Integer { bits, unsigned }
}

fn postgres(text: &str, p: &Parsed, enums: EnumResolver<'_>) -> Result<DataType, TypeError> {
    let key = p.key();
    let params = &p.params;
    let no_params =
        |t: DataType| -> Result<DataType, TypeError> { if params.is_some() { Ok(other(p)) } else { Ok(t) } };
    Ok(match key.as_str() {
        "boolean" | "bool" => no_params(DataType::Boolean)?,
        "smallint" | "int2" | "smallserial" | "serial2" => no_params(int(16, false))?,
        "integer" | "int" | "int4" | "serial" | "serial4" => no_params(int(32, false))?,
        "bigint" | "int8" | "bigserial" | "serial8" => no_params(int(64, false))?,
        "real" | "float4" => no_params(DataType::Float32)?,
        "double precision" | "float8" => no_params(DataType::Float64)?,
        "float" => match one(text, params)? {
            Some(n) if n <= 24 => DataType::Float32,
            _ => DataType::Float64,
        },
        "numeric" | "decimal" => match two(text, params)? {
            (Some(precision), None) => DataType::Decimal {
                precision: Some(precision),
                scale: Some(0),
            },
            (precision, scale) => DataType::Decimal { precision, scale },
        },
        "character varying" | "varchar" | "char varying" => DataType::Varchar(one(text, params)?),
        "character" | "char" => DataType::Char(Some(one(text, params)?.unwrap_or(1))),
        "bpchar" => DataType::Char(one(text, params)?),
        "text" => no_params(DataType::Text)?,
        "bytea" => no_params(DataType::Binary)?,
        "date" => no_params(DataType::Date)?,
        "time" | "time without time zone" => DataType::Time {
            precision: one(text, params)?,
            with_time_zone: false,
        },
        "time with time zone" | "timetz" => DataType::Time {
            precision: one(text, params)?,
            with_time_zone: true,
        },
        "timestamp" | "timestamp without time zone" => DataType::Timestamp {
            precision: one(text, params)?,
            with_time_zone: false,
            mysql_datetime: false,
        },
        "timestamp with time zone" | "timestamptz" => DataType::Timestamp {
            precision: one(text, params)?,
            with_time_zone: true,
            mysql_datetime: false,
        },
        "uuid" => no_params(DataType::Uuid)?,
        "json" => no_params(DataType::Json)?,
        "jsonb" => no_params(DataType::Jsonb)?,
        _ => match p.words.as_slice() {
            // `_int4` is the catalog's name for `integer[]`.
            [w] if !w.quoted && w.value.len() > 1 && p.params.is_none() => match w.value.strip_prefix('_') {
                Some(element) => {
                    let inner = lex(element)?;
                    DataType::Array(Box::new(postgres(text, &inner, enums)?))
                }
                None => user_type(p, enums),
            },
            [_] => user_type(p, enums),
            _ => other(p),
        },
    })
}

fn mysql(text: &str, p: &Parsed, enums: EnumResolver<'_>) -> Result<DataType, TypeError> {
    let mut words: Vec<&str> = p.words.iter().map(Part::text).collect();
    let mut unsigned = false;
    while let Some(last) = words.last().copied() {
        match last {
            "unsigned" => unsigned = true,
            "signed" => {}
            _ => break,
        }
        words.pop();
    }
    let key = words.join(" ");
    let params = &p.params;
    let integer = |bits: u8| -> Result<DataType, TypeError> {
        one(text, params)?; // the display width has no meaning in the model
        Ok(int(bits, unsigned))
    };
    let signed_only = |t: DataType| -> Result<DataType, TypeError> {
        if unsigned || params.is_some() {
            Ok(other(p))
        } else {
            Ok(t)
        }
    };
    Ok(match key.as_str() {
        "bool" | "boolean" => signed_only(DataType::Boolean)?,
        "tinyint" if !unsigned && one(text, params)? == Some(1) => DataType::Boolean,
        "tinyint" | "int1" => integer(8)?,
        "smallint" | "int2" => integer(16)?,
        "mediumint" | "int3" | "middleint" => integer(24)?,
        "int" | "integer" | "int4" => integer(32)?,
        "bigint" | "int8" => integer(64)?,
        "serial" => signed_only(int(64, true))?,
        "decimal" | "numeric" | "dec" | "fixed" => {
            let (precision, scale) = two(text, params)?;
            DataType::Decimal {
                precision: Some(precision.unwrap_or(10)),
                scale: Some(scale.unwrap_or(0)),
            }
        }
        "float" if params.is_none() => DataType::Float32,
        "float" => match two(text, params)? {
            (Some(n), None) if n <= 24 => DataType::Float32,
            (Some(_), None) => DataType::Float64,
            _ => other(p),
        },
        "double" | "double precision" | "real" if params.is_none() => DataType::Float64,
        "char" | "character" if !unsigned => DataType::Char(Some(one(text, params)?.unwrap_or(1))),
        "varchar" | "character varying" => DataType::Varchar(one(text, params)?),
        "text" => signed_only(DataType::Text)?,
        "blob" => signed_only(DataType::Binary)?,
        "date" => signed_only(DataType::Date)?,
        "time" => DataType::Time {
            precision: one(text, params)?.filter(|&n| n != 0),
            with_time_zone: false,
        },
        "datetime" | "timestamp" => DataType::Timestamp {
            precision: one(text, params)?.filter(|&n| n != 0),
            with_time_zone: false,
            mysql_datetime: key == "datetime",
        },
        "uuid" => signed_only(DataType::Uuid)?,
        "json" => signed_only(DataType::Json)?,
        "enum" => DataType::InlineEnum(params.clone().unwrap_or_default()),
        "set" => DataType::InlineSet(params.clone().unwrap_or_default()),
        // `year(4)` is the only year there is; MariaDB's catalog still prints the width.
        "year" if !unsigned && matches!(one(text, params)?, None | Some(4)) => DataType::Other {
            name: "year".to_owned(),
            params: Vec::new(),
        },
        _ => match p.words.as_slice() {
            [_] if !unsigned => user_type(p, enums),
            _ => other(p),
        },
    })
}

/// The SQL that declares `data_type` in DDL for `dialect`.
///
/// PostgreSQL spellings are `format_type()`'s, so a rendered type reads back from the catalog
/// as the same text. A type the dialect lacks (an inline enum on PostgreSQL, `jsonb` or an
/// array on MySQL) is rendered in the nearest spelling and will be refused by the server.
pub fn render_type(dialect: Dialect, data_type: &DataType) -> String {
    match dialect {
        Dialect::Postgres => render_postgres(data_type),
        Dialect::Mysql => render_mysql(data_type),
    }
}

fn with_params(name: &str, params: &[String]) -> String {
    if params.is_empty() {
        name.to_owned()
    } else {
        format!("{name}({})", params.join(","))
    }
}

fn precision_suffix(precision: Option<u32>) -> String {
    precision.map(|p| format!("({p})")).unwrap_or_default()
}

fn decimal(name: &str, precision: Option<u32>, scale: Option<u32>) -> String {
    match (precision, scale) {
        (Some(p), Some(s)) => format!("{name}({p},{s})"),
        (Some(p), None) => format!("{name}({p})"),
        _ => name.to_owned(),
    }
}

/// Quotes a PostgreSQL identifier when it is not a plain lowercase name.
pub fn quote_pg_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$');
    if plain {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

fn inline_enum(values: &[String]) -> String {
    format!("enum({})", quoted_members(values))
}

fn inline_set(values: &[String]) -> String {
    format!("set({})", quoted_members(values))
}

/// `'a','b'`: each member a MySQL string literal.
fn quoted_members(values: &[String]) -> String {
    let quoted: Vec<String> = values
        .iter()
        .map(|v| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''")))
        .collect();
    quoted.join(",")
}

fn render_postgres(t: &DataType) -> String {
    match t {
        DataType::Boolean => "boolean".into(),
        DataType::Integer { bits, .. } => match bits {
            0..=16 => "smallint".into(),
            17..=32 => "integer".into(),
            _ => "bigint".into(),
        },
        DataType::Decimal { precision, scale } => decimal("numeric", *precision, *scale),
        DataType::Float32 => "real".into(),
        DataType::Float64 => "double precision".into(),
        DataType::Char(n) => format!("character{}", precision_suffix(*n)),
        DataType::Varchar(n) => format!("character varying{}", precision_suffix(*n)),
        DataType::Text => "text".into(),
        DataType::Binary => "bytea".into(),
        DataType::Date => "date".into(),
        DataType::Time {
            precision,
            with_time_zone,
        } => format!(
            "time{} {} time zone",
            precision_suffix(*precision),
            if *with_time_zone { "with" } else { "without" }
        ),
        DataType::Timestamp {
            precision,
            with_time_zone,
            ..
        } => format!(
            "timestamp{} {} time zone",
            precision_suffix(*precision),
            if *with_time_zone { "with" } else { "without" }
        ),
        DataType::Uuid => "uuid".into(),
        DataType::Json => "json".into(),
        DataType::Jsonb => "jsonb".into(),
        DataType::Enum(q) if q.schema.is_empty() => quote_pg_ident(&q.name),
        DataType::Enum(q) => format!("{}.{}", quote_pg_ident(&q.schema), quote_pg_ident(&q.name)),
        DataType::InlineEnum(values) => inline_enum(values),
        DataType::InlineSet(values) => inline_set(values),
        DataType::Array(inner) => format!("{}[]", render_postgres(inner)),
        DataType::Other { name, params } => with_params(name, params),
    }
}

fn render_mysql(t: &DataType) -> String {
    match t {
        DataType::Boolean => "tinyint(1)".into(),
        DataType::Integer { bits, unsigned } => {
            let name = match bits {
                0..=8 => "tinyint",
                9..=16 => "smallint",
                17..=24 => "mediumint",
                25..=32 => "int",
                _ => "bigint",
            };
            if *unsigned {
                format!("{name} unsigned")
            } else {
                name.to_owned()
            }
        }
        DataType::Decimal { precision, scale } => {
            decimal("decimal", precision.or(Some(10)), scale.or(Some(0)))
        }
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Char(n) => format!("char{}", precision_suffix(*n)),
        DataType::Varchar(n) => format!("varchar{}", precision_suffix(*n)),
        DataType::Text => "text".into(),
        DataType::Binary => "blob".into(),
        DataType::Date => "date".into(),
        DataType::Time { precision, .. } => format!("time{}", precision_suffix(*precision)),
        DataType::Timestamp {
            precision,
            mysql_datetime,
            ..
        } => format!(
            "{}{}",
            if *mysql_datetime { "datetime" } else { "timestamp" },
            precision_suffix(*precision)
        ),
        DataType::Uuid => "uuid".into(),
        DataType::Json | DataType::Jsonb => "json".into(),
        DataType::Enum(q) => q.name.clone(),
        DataType::InlineEnum(values) => inline_enum(values),
        DataType::InlineSet(values) => inline_set(values),
        DataType::Array(inner) => format!("{}[]", render_mysql(inner)),
        DataType::Other { name, params } => with_params(name, params),
    }
}
