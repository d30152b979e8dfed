//! The SQL DDL reader: `CREATE SCHEMA`, `CREATE EXTENSION`, `CREATE TYPE … AS ENUM`,
//! `CREATE TABLE`, `CREATE [UNIQUE] INDEX`, `CREATE [MATERIALIZED] VIEW` ([`view`]), `CREATE
//! DOMAIN` ([`domain`]), `CREATE SEQUENCE` ([`sequence`]), row-level security, `CREATE POLICY`,
//! table `GRANT`/`REVOKE` ([`security`]), `COMMENT ON TABLE/COLUMN/VIEW/DOMAIN/SEQUENCE/INDEX`,
//! `ALTER TABLE [ONLY] … ADD CONSTRAINT` and `… ALTER COLUMN … SET DEFAULT`, through `sqlparser`;
//! MySQL `CREATE VIEW` and `CREATE TRIGGER` from their text (module `program`);
//! plus the statements `pg_dump` and `mysqldump` write around them ([`dump`]): those that do not
//! describe schema are skipped and reported, serial columns spelled out as a sequence, its owner
//! and a default read back as serial columns. PostgreSQL functions, procedures and triggers are
//! read from their text ([`pg_program`]), partitioning from its tokens (module `partition`). Anything
//! else is refused.
//!
//! Unqualified names live in `public` on PostgreSQL and in `""` on MySQL. `IF NOT EXISTS` makes a
//! statement about an object already declared a no-op; without it, a second declaration is an
//! error. Unnamed constraints and indexes get the server's default names ([`crate::names`]).
//! PostgreSQL `serial` columns read as an integer column, NOT NULL, with the default
//! `nextval('<table>_<col>_seq')` (see [`crate::names::serial_default`]).

use std::collections::{BTreeMap, BTreeSet};

use sqlparser::ast::{Ident, ObjectType, SchemaName, Spanned, Statement, UserDefinedTypeRepresentation};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location as SqlLocation, Token, TokenWithSpan, Tokenizer};

use crate::model::{Dialect, EXTENSION_CATALOG, EnumType, Extension, QualifiedName, Schema};
use crate::names::Namer;
use crate::normalize::sql_dialect;

use super::check::{PendingForeignKey, foreign_keys};
use super::{Document, IgnoreReason, Ignored, Location, ReadError};

mod alter;
mod comment;
mod constraint_options;
mod domain;
mod dump;
mod grant;
mod index;
mod mysql_index;
mod names;
mod options;
mod partition;
mod pg_program;
mod program;
mod rename;
mod security;
mod sequence;
mod split;
mod table;
mod text;
mod tokens;
mod view;

use dump::Rule;
use split::Piece;
use text::{LineCounter, first_words, position_in, summary};

/// The deepest nesting of one statement (parentheses, subqueries, expressions) sqlparser descends
/// into before it refuses the statement with a typed error instead of overflowing the stack. It
/// is sqlparser's own default, set explicitly so that this value is the one in force.
pub const MAX_NESTING: usize = 50;

/// Reads one SQL script.
pub fn parse(dialect: Dialect, file: &str, text: &str) -> Result<Schema, ReadError> {
    parse_document(dialect, file, text).map(|d| d.schema)
}

/// Reads one SQL script, with the statements it skipped.
pub fn parse_document(dialect: Dialect, file: &str, text: &str) -> Result<Document, ReadError> {
    let mut reader = Reader::new(dialect);
    reader.feed(file, text)?;
    reader.finish()
}

/// A reader that takes several scripts in order as one.
pub struct Reader {
    pub(crate) dialect: Dialect,
    pub(crate) schema: Schema,
    pub(crate) namer: Namer,
    pub(crate) pending: Vec<PendingForeignKey>,
    pub(crate) file: String,
    /// Where the statement being read starts: sqlparser's positions are relative to it.
    base: Location,
    ignored: Vec<Ignored>,
    sequences: BTreeMap<QualifiedName, sequence::PendingSequence>,
    /// Partition indexes attached to their parent's, which a sub-partition's may attach to.
    attached_indexes: BTreeSet<QualifiedName>,
    /// MySQL: the database the document describes, once a statement names one.
    target_database: Option<String>,
    /// PostgreSQL: schemas objects were placed in before (or without) their `CREATE SCHEMA`.
    implied: BTreeSet<String>,
    /// The `-- ptah:renamed-from` annotations of the statement being read, until its `CREATE
    /// TABLE` takes them.
    pending_renames: Vec<rename::Annotation>,
}

impl Reader {
    /// A reader with nothing read yet.
    pub fn new(dialect: Dialect) -> Self {
        Reader {
            dialect,
            schema: Schema::default(),
            namer: Namer::new(dialect),
            pending: Vec::new(),
            file: String::new(),
            base: Location {
                file: String::new(),
                line: 1,
                column: 1,
            },
            ignored: Vec::new(),
            sequences: BTreeMap::new(),
            attached_indexes: BTreeSet::new(),
            target_database: None,
            implied: BTreeSet::new(),
            pending_renames: Vec::new(),
        }
    }

    /// Reads one script, called `file` in errors.
    pub fn feed(&mut self, file: &str, text: &str) -> Result<(), ReadError> {
        self.file = file.to_owned();
        let mut lines = LineCounter::default();
        // Where the text no piece covers begins: comments and terminators between statements.
        let mut uncovered = 0;
        for piece in split::split(self.dialect, text) {
            let (Piece::Client(range) | Piece::Statement(range, _)) = &piece;
            self.no_stray_rename(file, text, uncovered..range.start, &mut lines)?;
            uncovered = range.end;
            match piece {
                Piece::Client(range) => {
                    let at = lines.locate(file, text, range.start);
                    self.ignore(at, IgnoreReason::ClientCommand, &text[range]);
                }
                Piece::Statement(range, first) => {
                    self.base = lines.locate(file, text, range.start);
                    let at = lines.locate(file, text, first);
                    self.piece(&text[range], at.clone())?;
                    self.no_pending_renames(&at)?;
                }
            }
        }
        self.no_stray_rename(file, text, uncovered..text.len(), &mut lines)
    }

    /// Reads one statement (no terminator) whose first token is `at`.
    fn piece(&mut self, text: &str, at: Location) -> Result<(), ReadError> {
        let sql = sql_dialect(self.dialect);
        let mut tokens: Vec<TokenWithSpan> = Tokenizer::new(sql.as_ref(), text)
            .tokenize_with_location()
            .map_err(|e| self.syntax(ParserError::TokenizerError(e.to_string())))?;
        self.pending_renames = self.annotations(&tokens)?;
        tokens.retain(|t| !matches!(t.token, Token::Whitespace(_)));
        if tokens.is_empty() {
            return Ok(());
        }
        if self.dialect == Dialect::Postgres
            && let Some(form) = partition::form(&tokens)
        {
            return self.partition_statement(form, text, tokens, at);
        }
        if self.dialect == Dialect::Postgres && view::is_create_view(&tokens) {
            return self.create_view(text, &tokens, at);
        }
        if self.dialect == Dialect::Postgres && domain::is_create_domain(&tokens) {
            return self.create_domain(text, &tokens, at);
        }
        if let Some(kind) = security::kind(&tokens).filter(|_| self.dialect == Dialect::Postgres) {
            return self.security(kind, text, &tokens, at);
        }
        let bare: Vec<Token> = tokens.iter().map(|t| t.token.clone()).collect();
        match dump::classify(self.dialect, &bare) {
            Rule::Ignore(reason) => {
                self.ignore(at, reason, text);
                Ok(())
            }
            Rule::Refuse(what) => Err(self.unsupported(&at, what)),
            Rule::OwnedBy {
                sequence,
                table,
                column,
            } => self.owned_by(&sequence, &table, &column, at),
            Rule::AddIdentity {
                table,
                column,
                identity,
                options,
            } => self.add_identity(&table, &column, identity, &options, at),
            Rule::MysqlView => self.mysql_view(text, at),
            Rule::MysqlTrigger => self.mysql_trigger(text, at),
            Rule::MysqlRoutine => self.mysql_routine(text, at),
            Rule::MysqlEvent => self.mysql_event(text, at),
            Rule::MysqlDatabase => self.mysql_database(text, at),
            Rule::MysqlDrop => self.mysql_drop(text, at),
            Rule::MysqlPartitioned => self.mysql_partitioned_table(text, at),
            Rule::Routine => self.create_routine(&pg_program::Source::new(text, &tokens), at),
            Rule::Trigger => self.create_trigger(&pg_program::Source::new(text, &tokens), at),
            Rule::RoutineComment => self.comment_routine(&pg_program::Source::new(text, &tokens), at),
            Rule::TriggerComment => self.comment_trigger(&pg_program::Source::new(text, &tokens), at),
            Rule::Parse => self.parse_tokens(tokens, at),
        }
    }

    /// Reads one statement's tokens through sqlparser.
    pub(crate) fn parse_tokens(&mut self, tokens: Vec<TokenWithSpan>, at: Location) -> Result<(), ReadError> {
        let sql = sql_dialect(self.dialect);
        let mut parser = Parser::new(sql.as_ref())
            .with_recursion_limit(MAX_NESTING)
            .with_tokens_with_locations(tokens);
        let statement = parser.parse_statement().map_err(|e| self.syntax(e))?;
        let after = parser.peek_token();
        if after.token != Token::EOF {
            return Err(ReadError::Syntax {
                at: self.at(after.span.start),
                message: format!("expected `;`, found {}", after.token),
            });
        }
        self.statement(statement, at)
    }

    pub(crate) fn ignore(&mut self, at: Location, reason: IgnoreReason, text: &str) {
        self.ignored.push(Ignored {
            at,
            reason,
            statement: summary(text),
        });
    }

    /// Finishes the document: checks every foreign key's target and every sequence's owner.
    pub fn finish(mut self) -> Result<Document, ReadError> {
        self.finish_sequences()?;
        partition::settle(&mut self.schema);
        foreign_keys(&mut self.schema, &self.pending)?;
        super::check::canonical_forms(self.dialect, &mut self.schema);
        super::check::renames(&self.schema, &self.file)?;
        Ok(Document {
            schema: self.schema,
            ignored: self.ignored,
        })
    }

    /// A sqlparser position (relative to the statement being read) in the document.
    pub(crate) fn at(&self, loc: SqlLocation) -> Location {
        let line = usize::try_from(loc.line).unwrap_or(0).max(1);
        let column = usize::try_from(loc.column).unwrap_or(0).max(1);
        Location {
            file: self.file.clone(),
            line: self.base.line + line - 1,
            column: if line == 1 {
                self.base.column + column - 1
            } else {
                column
            },
        }
    }

    pub(crate) fn at_ident(&self, ident: &Ident, fallback: &Location) -> Location {
        if ident.span.start.line == 0 {
            fallback.clone()
        } else {
            self.at(ident.span.start)
        }
    }

    fn syntax(&self, e: ParserError) -> ReadError {
        let message = match &e {
            ParserError::TokenizerError(m) | ParserError::ParserError(m) => m.clone(),
            ParserError::RecursionLimitExceeded => {
                // sqlparser says no more than that: the statement's start is the place to show.
                return ReadError::NestingTooDeep {
                    at: self.base.clone(),
                    limit: MAX_NESTING,
                };
            }
        };
        let (line, column) = position_in(&message).unwrap_or((1, 1));
        let at = self.at(SqlLocation {
            line: u64::try_from(line).unwrap_or(1),
            column: u64::try_from(column).unwrap_or(1),
        });
        ReadError::Syntax { at, message }
    }

    pub(crate) fn unsupported(&self, at: &Location, what: impl Into<String>) -> ReadError {
        ReadError::Unsupported {
            at: at.clone(),
            what: what.into(),
        }
    }

    fn statement(&mut self, statement: Statement, at: Location) -> Result<(), ReadError> {
        match statement {
            Statement::CreateSchema {
                schema_name: SchemaName::Simple(name),
                if_not_exists,
                or_replace: false,
                with: None,
                options: None,
                default_collate_spec: None,
                clone: None,
            } if self.dialect == Dialect::Postgres => {
                let q = self.qualified(&name, &at)?;
                if q.schema != "public" {
                    return Err(self.unsupported(&at, format!("schema name {name}")));
                }
                // A schema an earlier object implied is declared now, not a second time.
                let implied = self.implied.remove(&q.name);
                if !self.schema.namespaces.insert(q.name.clone()) && !if_not_exists && !implied {
                    return Err(ReadError::Duplicate {
                        at,
                        what: format!("schema {}", q.name),
                    });
                }
                Ok(())
            }
            Statement::CreateExtension(ext) if self.dialect == Dialect::Postgres && !ext.cascade => {
                let name = self.ident(&ext.name);
                if self.schema.extensions.contains_key(&name) {
                    return if ext.if_not_exists {
                        Ok(())
                    } else {
                        Err(ReadError::Duplicate {
                            at,
                            what: format!("extension {name}"),
                        })
                    };
                }
                let schema = ext.schema.as_ref().map(|s| self.ident(s));
                // As the HCL reader has it: a declared schema, `public`, or the catalog. Not an
                // implied one: `WITH SCHEMA` names where an extension goes, and a misspelt name
                // there would otherwise create a schema of its own.
                if let Some(schema) = schema.as_deref().filter(|s| *s != EXTENSION_CATALOG)
                    && schema != "public"
                    && !self.schema.namespaces.contains(schema)
                {
                    return Err(ReadError::BadReference {
                        at,
                        what: format!("schema {schema}"),
                    });
                }
                let extension = Extension {
                    name: name.clone(),
                    schema,
                    version: ext.version.as_ref().map(|v| v.value.clone()),
                };
                self.schema.extensions.insert(name, extension);
                Ok(())
            }
            Statement::CreateType {
                name,
                representation: Some(UserDefinedTypeRepresentation::Enum { labels }),
            } if self.dialect == Dialect::Postgres => {
                let q = self.qualified(&name, &at)?;
                self.check_namespace(&q, &at)?;
                if self.schema.enums.contains_key(&q) {
                    return Err(ReadError::Duplicate {
                        at,
                        what: format!("type {q}"),
                    });
                }
                let values = labels.iter().map(|l| l.value.clone()).collect();
                self.schema.enums.insert(q.clone(), EnumType { name: q, values });
                Ok(())
            }
            Statement::CreateTable(create) => self.create_table(create, at),
            Statement::CreateSequence {
                temporary: false,
                if_not_exists,
                name,
                sequence_options,
            } if self.dialect == Dialect::Postgres => {
                self.create_sequence(&name, if_not_exists, &sequence_options, at)
            }
            Statement::Drop {
                object_type: object_type @ (ObjectType::Table | ObjectType::View),
                if_exists: true,
                names,
                ..
            } => self.drop_if_exists(object_type, &names, at),
            Statement::Drop {
                object_type: ObjectType::Schema,
                if_exists: true,
                names,
                ..
            } if self.dialect == Dialect::Postgres => self.drop_schema_if_exists(&names, at),
            Statement::CreateIndex(create) => self.create_index(create, at),
            Statement::Comment {
                object_type,
                object_name,
                comment,
                if_exists: false,
            } => self.comment(object_type, &object_name, comment, at),
            Statement::AlterTable(alter) => self.alter_table(alter, at),
            other => {
                let text = other.to_string();
                let _ = other.span();
                Err(self.unsupported(&at, format!("statement {}", first_words(&text, 2))))
            }
        }
    }
}
