//! The SQL reader on dump output: what it skips (and reports), what it refuses by name, the serial
//! columns and identities a dump spells out, and positions that stay exact across statements.

use ptah_schema::read::sql::parse_document;
use ptah_schema::read::{Document, IgnoreReason, ReadError};
use ptah_schema::{DataType, DefaultValue, Dialect, Identity, QualifiedName};

const PG: Dialect = Dialect::Postgres;
const MY: Dialect = Dialect::Mysql;

fn read(dialect: Dialect, text: &str) -> Document {
    parse_document(dialect, "dump.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

fn refusal(dialect: Dialect, text: &str) -> (String, usize, usize) {
    match parse_document(dialect, "dump.sql", text) {
        Err(ReadError::Unsupported { at, what }) => (what, at.line, at.column),
        other => panic!("{text}: expected a refusal, got {other:?}"),
    }
}

fn reasons(doc: &Document) -> Vec<IgnoreReason> {
    doc.ignored.iter().map(|i| i.reason).collect()
}

const PG_PREAMBLE: &str = "--\n-- PostgreSQL database dump\n--\n\n\\restrict K3y\n\n\
SET statement_timeout = 0;\nSET client_encoding = 'UTF8';\nSET standard_conforming_strings = on;\n\
SELECT pg_catalog.set_config('search_path', '', false);\nSET check_function_bodies = false;\n\
SET default_tablespace = '';\nSET default_table_access_method = heap;\n";

#[test]
fn a_pg_dump_preamble_and_ownership_are_skipped_and_reported() {
    let text = format!(
        "{PG_PREAMBLE}\nCREATE TABLE public.t (\n    id integer NOT NULL\n);\n\nALTER TABLE public.t OWNER TO postgres;\n\
         COMMENT ON SCHEMA public IS 'standard public schema';\n\\unrestrict K3y\n"
    );
    let doc = read(PG, &text);
    assert!(doc.schema.tables.contains_key(&QualifiedName::new("public", "t")));
    use IgnoreReason::*;
    assert_eq!(
        reasons(&doc),
        [
            ClientCommand,
            SessionSetting,
            SessionSetting,
            SessionSetting,
            SessionSetting,
            SessionSetting,
            SessionSetting,
            SessionSetting,
            Ownership,
            DefaultComment,
            ClientCommand
        ]
    );
    let first = &doc.ignored[0];
    assert_eq!((first.at.line, first.at.column), (5, 1));
    let owner = &doc.ignored[8];
    assert_eq!(owner.at.line, 19);
    assert_eq!(
        owner.to_string(),
        "dump.sql:19:1: ignored (ownership): ALTER TABLE public.t OWNER TO postgres"
    );
}

#[test]
fn settings_that_place_objects_are_refused_by_name() {
    for (text, says) in [
        ("SET search_path = billing;", "search_path"),
        (
            "SELECT pg_catalog.set_config('search_path', 'billing', false);",
            "billing",
        ),
        ("SET default_tablespace = fast;", "tablespaces"),
        ("SET default_table_access_method = columnar;", "access methods"),
        ("SELECT 1;", "a query"),
    ] {
        let (what, _, _) = refusal(PG, text);
        assert!(what.contains(says), "{text}: {what}");
    }
    let (what, _, _) = refusal(MY, "/*!40101 SET SQL_MODE='ANSI_QUOTES' */;");
    assert!(what.contains("ANSI_QUOTES"), "{what}");
}

#[test]
fn unmodelled_objects_are_refused_by_name_at_their_statement() {
    for (dialect, text, says) in [
        (
            PG,
            "CREATE POLICY p ON x TO CURRENT_USER USING (true)",
            "CURRENT_USER",
        ),
        (
            PG,
            "ALTER TABLE public.p DETACH PARTITION public.p_1",
            "DETACH PARTITION",
        ),
        (
            PG,
            "ALTER TABLE public.x ENABLE ROW LEVEL SECURITY, ADD COLUMN y int",
            "ROW LEVEL SECURITY",
        ),
        (
            PG,
            "GRANT SELECT (a) ON TABLE public.x TO reader",
            "column privileges",
        ),
        (PG, "GRANT USAGE ON SCHEMA public TO reader", "ON SCHEMA"),
        (
            PG,
            "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO reader",
            "DEFAULT PRIVILEGES",
        ),
        (
            PG,
            "CREATE SEQUENCE public.s AS numeric START WITH 1",
            "sequence type",
        ),
        (
            MY,
            "CREATE DEFINER=`root`@`localhost` AGGREGATE FUNCTION `f` (x int) RETURNS int BEGIN RETURN 1; END",
            "CREATE AGGREGATE",
        ),
        (
            MY,
            "DELIMITER ;;\nCREATE DEFINER=`root`@`localhost` AGGREGATE FUNCTION `f1`(x int) RETURNS int(11)\nBEGIN RETURN x; END\n;;\nDELIMITER ;",
            "CREATE AGGREGATE",
        ),
        (MY, "INSERT INTO t VALUES (1)", "INSERT"),
    ] {
        // Two statements first, so the position must be counted across them.
        let text = format!("SET a = 1;\n\n  {text};");
        let (what, line, column) = refusal(dialect, &text);
        assert!(what.contains(says), "{text}: {what}");
        // After `DELIMITER ;;` the function starts a line of its own.
        let expected = if text.contains("DELIMITER") {
            (4, 1)
        } else {
            (3, 3)
        };
        assert_eq!((line, column), expected, "{text}: {what}");
    }
}

#[test]
fn a_serial_column_spelled_out_by_pg_dump_reads_as_a_serial_column() {
    let dumped = read(
        PG,
        "CREATE TABLE public.actor (\n    actor_id integer NOT NULL,\n    name text\n);\n\
         CREATE SEQUENCE public.actor_actor_id_seq\n    AS integer\n    START WITH 1\n    INCREMENT BY 1\n    NO MINVALUE\n    NO MAXVALUE\n    CACHE 1;\n\
         ALTER TABLE public.actor_actor_id_seq OWNER TO postgres;\n\
         ALTER SEQUENCE public.actor_actor_id_seq OWNED BY public.actor.actor_id;\n\
         ALTER TABLE ONLY public.actor ALTER COLUMN actor_id SET DEFAULT nextval('public.actor_actor_id_seq'::regclass);\n\
         ALTER TABLE ONLY public.actor\n    ADD CONSTRAINT actor_pkey PRIMARY KEY (actor_id);\n",
    );
    let written = read(PG, "CREATE TABLE actor (actor_id serial PRIMARY KEY, name text);");
    assert_eq!(dumped.schema, written.schema);
}

#[test]
fn a_sequence_is_folded_into_a_serial_column_only_when_it_is_exactly_its_implicit_one() {
    let serial = "CREATE TABLE public.t (\n    id integer NOT NULL\n);\n\
        CREATE SEQUENCE public.t_id_seq\n    AS integer\n    START WITH 1\n    INCREMENT BY 1\n    NO MINVALUE\n    NO MAXVALUE\n    CACHE 1;\n\
        ALTER SEQUENCE public.t_id_seq OWNED BY public.t.id;\n\
        ALTER TABLE ONLY public.t ALTER COLUMN id SET DEFAULT nextval('public.t_id_seq'::regclass);\n";
    assert!(read(PG, serial).schema.sequences.is_empty());
    let t_id_seq = QualifiedName::new("public", "t_id_seq");
    // Its own start, a comment, or a column that does not draw from it: a sequence of its own.
    for text in [
        serial.replace("START WITH 1\n", "START WITH 1000\n"),
        format!("{serial}COMMENT ON SEQUENCE public.t_id_seq IS 'ids';\n"),
        serial.replace(
            "ALTER TABLE ONLY public.t ALTER COLUMN id SET DEFAULT nextval('public.t_id_seq'::regclass);\n",
            "",
        ),
    ] {
        let doc = read(PG, &text);
        let s = &doc.schema.sequences[&t_id_seq];
        assert_eq!(
            s.owned_by.as_ref().map(|o| o.column.as_str()),
            Some("id"),
            "{text}"
        );
    }
    let standalone = read(PG, "CREATE SEQUENCE public.s START WITH 100 INCREMENT BY 5;\n");
    let s = &standalone.schema.sequences[&QualifiedName::new("public", "s")];
    assert_eq!((s.start, s.increment, s.owned_by.clone()), (100, 5, None));
    match parse_document(
        PG,
        "dump.sql",
        "CREATE TABLE public.t (id integer NOT NULL);\nCREATE SEQUENCE public.s;\nALTER SEQUENCE public.s OWNED BY public.t.nope;\n",
    ) {
        Err(ReadError::BadReference { at, what }) => {
            assert!(what.contains("nope"), "{what}");
            assert_eq!(at.line, 2);
        }
        other => panic!("expected a bad reference, got {other:?}"),
    }
}

#[test]
fn an_identity_added_after_the_table_reads_as_declared_inline() {
    let dumped = read(
        PG,
        "CREATE TABLE public.film (\n    film_id integer NOT NULL\n);\n\
         ALTER TABLE public.film ALTER COLUMN film_id ADD GENERATED BY DEFAULT AS IDENTITY (\n    SEQUENCE NAME public.film_film_id_seq\n    START WITH 1\n    INCREMENT BY 1\n    NO MINVALUE\n    NO MAXVALUE\n    CACHE 1\n);\n",
    );
    let column = dumped.schema.tables[&QualifiedName::new("public", "film")].columns[0].clone();
    assert_eq!(column.identity, Some(Identity::ByDefault));
    assert!(!column.nullable);
    assert_eq!(column.identity_options, None);
    let started = read(
        PG,
        "CREATE TABLE public.film (film_id integer NOT NULL);\nALTER TABLE public.film ALTER COLUMN film_id ADD GENERATED ALWAYS AS IDENTITY (START WITH 100);",
    );
    let column = &started.schema.tables[&QualifiedName::new("public", "film")].columns[0];
    assert_eq!(column.identity_options.map(|o| o.start), Some(100));
}

#[test]
fn dump_qualified_types_and_sequences_read_as_the_catalog_names_them() {
    let doc = read(
        PG,
        "CREATE TABLE public.u (email public.citext, n pg_catalog.int4, id bigint DEFAULT nextval('public.u_id_seq'::regclass));",
    );
    let t = &doc.schema.tables[&QualifiedName::new("public", "u")];
    assert_eq!(
        t.columns[0].data_type,
        DataType::Other {
            name: "citext".into(),
            params: vec![]
        }
    );
    assert_eq!(
        t.columns[1].data_type,
        DataType::Integer {
            bits: 32,
            unsigned: false
        }
    );
    assert_eq!(
        t.columns[2].default,
        Some(DefaultValue::Expression("nextval('u_id_seq')".into()))
    );
}

#[test]
fn a_mysqldump_preamble_and_its_client_commands_are_skipped_and_reported() {
    let text = "/*M!999999\\- enable the sandbox mode */ \n\
        /*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\n/*!40101 SET NAMES utf8mb4 */;\n\
        /*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;\n\
        DROP TABLE IF EXISTS `actor`;\n/*!40101 SET @saved_cs_client     = @@character_set_client */;\n\
        CREATE TABLE `actor` (\n  `actor_id` smallint(5) unsigned NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (`actor_id`)\n) ENGINE=InnoDB AUTO_INCREMENT=201;\n\
        LOCK TABLES `actor` WRITE;\n/*!40000 ALTER TABLE `actor` DISABLE KEYS */;\nUNLOCK TABLES;\n\
        DELIMITER ;;\nDELIMITER ;\n/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;\n";
    let doc = read(MY, text);
    assert!(doc.schema.tables.contains_key(&QualifiedName::new("", "actor")));
    use IgnoreReason::*;
    assert_eq!(
        reasons(&doc),
        [
            SessionSetting,
            SessionSetting,
            SessionSetting,
            UndeclaredDrop,
            SessionSetting,
            AutoIncrementCounter,
            DataLoad,
            DataLoad,
            DataLoad,
            ClientCommand,
            ClientCommand,
            SessionSetting
        ]
    );
    let counter = doc
        .ignored
        .iter()
        .find(|i| i.reason == AutoIncrementCounter)
        .expect("counter");
    assert!(
        counter.statement.contains("AUTO_INCREMENT=201"),
        "{}",
        counter.statement
    );
}

#[test]
fn dropping_a_declared_table_is_refused() {
    let (what, line, _) = refusal(MY, "CREATE TABLE a (id int);\nDROP TABLE IF EXISTS a;");
    assert!(what.contains("declared before it"), "{what}");
    assert_eq!(line, 2);
}

#[test]
fn schema_statements_are_still_read_and_odd_names_are_not_taken_for_kinds() {
    let doc = read(
        PG,
        "CREATE TABLE public.view (function integer NOT NULL);\nALTER TABLE ONLY public.view ADD CONSTRAINT view_pkey PRIMARY KEY (function);\nCOMMENT ON TABLE public.view IS 'x';",
    );
    let t = &doc.schema.tables[&QualifiedName::new("public", "view")];
    assert_eq!(t.primary_key.as_ref().map(|p| p.name.as_str()), Some("view_pkey"));
    assert!(doc.ignored.is_empty());
}
