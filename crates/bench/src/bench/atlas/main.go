// The Atlas engine as `cargo xtask bench executor` measures it: what `atlas schema apply
// --dev-url` does before it prints a plan. It inspects the live database, loads the desired
// statements into an empty dev database, inspects it, diffs the two, and plans the changes.
// Atlas's own restore of the dev database (migrate.Snapshoter) drops a PostgreSQL schema of
// 1,000 tables in one statement, beyond the server's default lock table, so the bench empties
// the dev database between runs itself and this main leaves it as loaded.
//
// Inputs: PTAH_BENCH_URL (live), PTAH_BENCH_DEV_URL (an empty dev database), PTAH_BENCH_SCHEMAS
// (comma-separated schema names on PostgreSQL; empty on MySQL, where the URL's database is the
// schema), and the paths of JSON arrays of the desired statements as the arguments, run in order.
// Output: one JSON line with the number of changes and planned statements, and the phase times.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	_ "ariga.io/atlas/sql/mysql"
	_ "ariga.io/atlas/sql/postgres"
	"ariga.io/atlas/sql/schema"
	"ariga.io/atlas/sql/sqlclient"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"
)

type report struct {
	Changes        int     `json:"changes"`
	Statements     int     `json:"statements"`
	InspectSeconds float64 `json:"inspect_seconds"`
	DevSeconds     float64 `json:"dev_seconds"`
	DiffSeconds    float64 `json:"diff_seconds"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "atlas bench:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return fmt.Errorf("usage: %s <statements.json>...", os.Args[0])
	}
	var statements []string
	for _, path := range os.Args[1:] {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var more []string
		if err := json.Unmarshal(raw, &more); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		statements = append(statements, more...)
	}
	var schemas []string
	if s := os.Getenv("PTAH_BENCH_SCHEMAS"); s != "" {
		schemas = strings.Split(s, ",")
	}
	ctx := context.Background()
	live, err := sqlclient.Open(ctx, os.Getenv("PTAH_BENCH_URL"))
	if err != nil {
		return fmt.Errorf("live database: %w", err)
	}
	defer live.Close()
	dev, err := sqlclient.Open(ctx, os.Getenv("PTAH_BENCH_DEV_URL"))
	if err != nil {
		return fmt.Errorf("dev database: %w", err)
	}
	defer dev.Close()

	started := time.Now()
	current, err := inspect(ctx, live, schemas)
	if err != nil {
		return fmt.Errorf("inspect live: %w", err)
	}
	inspected := time.Now()
	desired, err := load(ctx, dev, schemas, statements)
	if err != nil {
		return err
	}
	loaded := time.Now()
	var changes []schema.Change
	if schemas == nil {
		// One MySQL database is one schema: compare the dev database's under the live one's name.
		desired.Schemas[0].Name = current.Schemas[0].Name
		changes, err = live.SchemaDiff(current.Schemas[0], desired.Schemas[0])
	} else {
		changes, err = live.RealmDiff(current, desired)
	}
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	plan, err := live.PlanChanges(ctx, "bench", changes)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	done := time.Now()
	return json.NewEncoder(os.Stdout).Encode(report{
		Changes:        len(changes),
		Statements:     len(plan.Changes),
		InspectSeconds: inspected.Sub(started).Seconds(),
		DevSeconds:     loaded.Sub(inspected).Seconds(),
		DiffSeconds:    done.Sub(loaded).Seconds(),
	})
}

// load runs the desired statements on the dev database and inspects it.
func load(ctx context.Context, dev *sqlclient.Client, schemas []string, statements []string) (*schema.Realm, error) {
	for i, s := range statements {
		if _, err := dev.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("dev statement %d of %d: %w", i+1, len(statements), err)
		}
	}
	desired, err := inspect(ctx, dev, schemas)
	if err != nil {
		return nil, fmt.Errorf("inspect dev: %w", err)
	}
	return desired, nil
}

func inspect(ctx context.Context, c *sqlclient.Client, schemas []string) (*schema.Realm, error) {
	if schemas == nil {
		s, err := c.InspectSchema(ctx, "", nil)
		if err != nil {
			return nil, err
		}
		return schema.NewRealm(s), nil
	}
	return c.InspectRealm(ctx, &schema.InspectRealmOption{Schemas: schemas})
}
