// Written by `cargo xtask bench migrations`: Flyway driven as its API documents, one command per
// process, so the JVM's start is part of the measured cost as it is for the Flyway CLI.
//
// Usage: java PtahBenchFlyway migrate|info DIR, with the JDBC URL, user and password in
// PTAH_BENCH_JDBC_URL, PTAH_BENCH_DB_USER and PTAH_BENCH_DB_PASSWORD (never on the command line).
// Prints `applied=N` (migrate: the migrations it executed; info: those its history records as
// applied) and
// `inner_seconds=S` (from main() to the end: the JVM's own start-up is not in it).

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;

public final class PtahBenchFlyway {
    public static void main(String[] args) {
        long started = System.nanoTime();
        if (args.length != 2) {
            System.err.println("usage: PtahBenchFlyway migrate|info DIR");
            System.exit(2);
        }
        Flyway flyway = Flyway.configure()
                .dataSource(env("PTAH_BENCH_JDBC_URL"), env("PTAH_BENCH_DB_USER"), env("PTAH_BENCH_DB_PASSWORD"))
                .locations("filesystem:" + args[1])
                .load();
        int applied;
        switch (args[0]) {
            case "migrate":
                applied = flyway.migrate().migrationsExecuted;
                break;
            case "info":
                applied = countApplied(flyway.info().all());
                break;
            default:
                System.err.println("unknown command " + args[0]);
                System.exit(2);
                return;
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.println("applied=" + applied);
        System.out.println("inner_seconds=" + seconds);
    }

    private static int countApplied(MigrationInfo[] infos) {
        int n = 0;
        for (MigrationInfo info : infos) {
            if (info.getState() == MigrationState.SUCCESS) {
                n++;
            }
        }
        return n;
    }

    private static String env(String name) {
        String value = System.getenv(name);
        if (value == null) {
            System.err.println(name + " is not set");
            System.exit(2);
        }
        return value;
    }
}
