//! `ptah schema plan|apply|drift` with PostgreSQL functions, a procedure and a trigger declared by
//! hand (`int`, unqualified names): the plan applies, apply's verification converges, and the next
//! plan and drift are empty, because signatures are compared in the server's spelling while the
//! plan stays bound to the file as written.

mod schema_support;

use ptah_engine::Dialect;
use ptah_testservices::unique_name;
use schema_support::{Fresh, Run, ptah};

const DOCUMENT: &str = r"
CREATE TABLE users (id int PRIMARY KEY, email varchar(100), updated_at timestamptz);
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END;
$$;
CREATE FUNCTION lower_email(e varchar(100)) RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT lower(e)';
COMMENT ON FUNCTION lower_email(varchar) IS 'normalised';
CREATE PROCEDURE purge(days int DEFAULT 30) LANGUAGE sql AS $$ DELETE FROM users WHERE id < days $$;
CREATE TRIGGER users_touch BEFORE UPDATE ON public.users FOR EACH ROW EXECUTE FUNCTION public.touch();
";

#[tokio::test]
async fn hand_written_routines_plan_apply_and_replan_empty() {
    let db = Fresh::new(Dialect::Postgres, "schema_routines").await;
    let dir = std::env::temp_dir().join(unique_name("ptah-routines"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("schema.sql"), DOCUMENT).expect("write");
    let run = |args: &[&str]| -> Run {
        let mut all = vec!["schema"];
        all.extend_from_slice(args);
        ptah(&db.url_text, &db.password, &dir, &all)
    };
    let plan = [
        "plan",
        "--from",
        "schema.sql",
        "--output",
        "p.json",
        "--format",
        "json",
    ];

    let first = run(&plan);
    assert_eq!(first.code, 1, "changes pending\n{}{}", first.stdout, first.stderr);
    let applied = run(&[
        "apply",
        "--from",
        "schema.sql",
        "--plan",
        "p.json",
        "--format",
        "json",
    ]);
    assert_eq!(applied.code, 0, "{}{}", applied.stdout, applied.stderr);
    let again = run(&plan);
    assert_eq!(
        again.code, 0,
        "nothing left to do\n{}{}",
        again.stdout, again.stderr
    );
    let drift = run(&["drift", "--from", "schema.sql", "--format", "json"]);
    assert_eq!(drift.code, 0, "{}{}", drift.stdout, drift.stderr);
    assert_eq!(drift.json["unmodelled"]["total"], 0, "{}", drift.stdout);

    let _ = std::fs::remove_dir_all(&dir);
    db.drop().await;
}
