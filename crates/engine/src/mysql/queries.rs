//! The information_schema queries, one per object kind, each filtered by `TABLE_SCHEMA = ?` (an
//! equality, so MariaDB scans only the one database).
//!
//! Each view re-opens every table definition once it outgrows `table_definition_cache`, so the
//! reader touches as few views as it can: PRIMARY KEY and UNIQUE come from STATISTICS (they are
//! indexes in MySQL), never from TABLE_CONSTRAINTS.

/// Base tables, their comments and default collations.
pub(super) const TABLES: &str = "SELECT TABLE_NAME, TABLE_COMMENT, TABLE_COLLATION FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE'";

/// Columns in table order.
pub(super) const COLUMNS: &str = "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_TYPE, \
     IS_NULLABLE, COLUMN_DEFAULT, EXTRA, COLUMN_COMMENT, DATA_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, \
     GENERATION_EXPRESSION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?";

/// Index parts (MariaDB: no functional indexes, so every part names a column).
pub(super) const STATISTICS_MARIADB: &str = "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, \
     SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, COLLATION, INDEX_TYPE, NULL, INDEX_COMMENT \
     FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ?";

/// Index parts (MySQL 8: a functional part has a NULL column and an EXPRESSION).
pub(super) const STATISTICS_MYSQL: &str = "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, \
     SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, COLLATION, INDEX_TYPE, EXPRESSION, INDEX_COMMENT \
     FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ?";

/// Foreign-key columns with what they reference.
pub(super) const FOREIGN_KEY_COLUMNS: &str = "SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, \
     ORDINAL_POSITION, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME \
     FROM information_schema.KEY_COLUMN_USAGE \
     WHERE TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME IS NOT NULL";

/// Foreign-key actions.
pub(super) const FOREIGN_KEY_RULES: &str = "SELECT TABLE_NAME, CONSTRAINT_NAME, UPDATE_RULE, \
     DELETE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?";

/// CHECK constraints (MariaDB names the table and the level: `Column` checks are named after
/// their column, and include the implicit `json_valid` check of every JSON column).
pub(super) const CHECKS_MARIADB: &str = "SELECT TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE, LEVEL \
     FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?";

/// CHECK constraints (MySQL 8's view has no table column: join TABLE_CONSTRAINTS).
pub(super) const CHECKS_MYSQL: &str = "SELECT t.TABLE_NAME, c.CONSTRAINT_NAME, c.CHECK_CLAUSE, \
     'Table' FROM information_schema.CHECK_CONSTRAINTS c \
     JOIN information_schema.TABLE_CONSTRAINTS t \
       ON t.CONSTRAINT_SCHEMA = c.CONSTRAINT_SCHEMA AND t.CONSTRAINT_NAME = c.CONSTRAINT_NAME \
      AND t.CONSTRAINT_TYPE = 'CHECK' \
     WHERE c.CONSTRAINT_SCHEMA = ? AND t.TABLE_SCHEMA = ?";
