package kgbench.neo4j;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.io.ByteUnit;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

/**
 * Runs an embedded Neo4j Community DBMS with a Bolt connector on loopback, for kgbench.
 *
 * <p>Why embedded: anyone with a JDK 17 and Maven can get a Neo4j 5.26 server with one command,
 * without installing a Neo4j distribution or Docker. The Python side
 * ({@code harness/neo4j/server.py}) builds the classpath, picks the port, generates the password
 * and starts this class detached; it only talks to the server through Bolt.
 *
 * <p>Usage:
 * <pre>
 * java [JVM flags] -cp "target/kgbench-neo4j.jar:target/lib/*" kgbench.neo4j.Launcher \
 *     --home DIR --port N [--ready-file FILE] [--pagecache 128m] [--tx-log-retention "2 files"]
 *     [--config neo4j.conf] [--password-file FILE | --no-auth] [--watch-pid PID]
 * </pre>
 *
 * <ul>
 *   <li>{@code --home}: the DBMS home; data lands in {@code HOME/data} (the layout that
 *       {@code neo4j-admin database import} writes with {@code NEO4J_HOME=HOME}), logs in
 *       {@code HOME/logs}.</li>
 *   <li>Authentication is on by default. The password is read from {@code --password-file}
 *       (a 0600 file) or the {@code KGBENCH_NEO4J_PASSWORD} environment variable, never from the
 *       command line where {@code ps} would show it. At every start the {@code neo4j} user's
 *       password is set to it in the system database, so the file is the single source of
 *       truth. {@code --no-auth} switches authentication off (Bolt still listens on 127.0.0.1
 *       only).</li>
 *   <li>When Bolt accepts connections and the password is set, a JSON ready file
 *       {@code {"pid":..,"port":..,"bolt_uri":..}} is written atomically (temp file + rename).</li>
 *   <li>SIGTERM (or Ctrl-C) runs a shutdown hook that shuts the DBMS down cleanly and removes
 *       the ready file.</li>
 *   <li>{@code --watch-pid PID}: shut down (cleanly) once that process is gone. Test fixtures
 *       use it so a killed test run cannot leave a server behind; the CLI does not, because
 *       there the server is meant to outlive the command that started it.</li>
 *   <li>{@code --config FILE}: extra settings in neo4j.conf syntax, applied before the ones
 *       above (which win), for tuning without a rebuild.</li>
 * </ul>
 *
 * <p>Exit codes: 0 after a clean shutdown, 1 when the DBMS cannot start, 2 for bad arguments.
 */
public final class Launcher {
    /** Environment variable that may carry the password instead of {@code --password-file}. */
    static final String PASSWORD_ENV = "KGBENCH_NEO4J_PASSWORD";

    private static final String USAGE = "usage: Launcher --home DIR --port N [--ready-file FILE]"
            + " [--pagecache SIZE] [--tx-log-retention POLICY] [--config FILE]"
            + " [--password-file FILE | --no-auth] [--watch-pid PID]";

    private Launcher() {}

    /** Parsed command line; see the class comment. */
    private record Options(
            Path home,
            int port,
            Path readyFile,
            String pagecache,
            String txLogRetention,
            Path configFile,
            Path passwordFile,
            boolean auth,
            long watchPid) {}

    public static void main(String[] args) {
        Options options;
        String password;
        try {
            options = parse(args);
            password = options.auth() ? readPassword(options.passwordFile()) : null;
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("kgbench-neo4j: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        try {
            run(options, password);
        } catch (Throwable t) {
            System.err.println("kgbench-neo4j: Neo4j failed to start: " + t);
            t.printStackTrace();
            System.out.flush();
            System.err.flush();
            // exit, not return: Neo4j's non-daemon threads would keep the JVM alive. If the
            // DBMS was already built, the shutdown hook closes it cleanly.
            System.exit(1);
        }
    }

    private static void run(Options o, String password) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        Files.createDirectories(o.home());
        SocketAddress bolt = new SocketAddress("127.0.0.1", o.port());

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(o.home());
        if (o.configFile() != null) {
            builder.loadPropertiesFromFile(o.configFile());
        }
        builder.setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, bolt)
                .setConfig(BoltConnector.advertised_address, bolt)
                // Loopback only, so plain Bolt; the driver uses bolt:// without TLS.
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                // No HTTP API: it would open more ports and nothing here uses it.
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, o.auth())
                // No lock-out after wrong passwords (default: 3 tries, then 5 s locked): the
                // password is 32 random characters on a loopback port, so the lock adds no
                // safety, only confusing "rate limit" errors after a mistyped NEO4J_PASSWORD.
                .setConfig(GraphDatabaseSettings.auth_max_failed_attempts, 0)
                // Explicit, small page cache: the default (50% of RAM minus heap) is far too
                // greedy for a laptop that also runs the benchmark.
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(o.pagecache()))
                // Benchmark stores are rebuilt from source data, never restored from backup,
                // so keep transaction logs short.
                .setConfig(GraphDatabaseSettings.keep_logical_logs, o.txLogRetention())
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold,
                        ByteUnit.mebiBytes(64))
                // No usage reports: a local benchmark server has no business phoning home.
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // Netty waits a 5 s quiet period per Bolt connector on shutdown (10 s in all);
                // the databases are already stopped by then, so skip it.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0);

        DatabaseManagementService dbms = builder.build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("kgbench-neo4j: shutting down");
            try {
                if (o.readyFile() != null) {
                    Files.deleteIfExists(o.readyFile());
                }
            } catch (IOException ignored) {
                // best effort: the Python side removes it too
            }
            dbms.shutdown();
            System.out.println("kgbench-neo4j: stopped");
            System.out.flush();
            stopped.countDown();
        }, "kgbench-neo4j-shutdown"));
        if (o.watchPid() > 0) {
            watch(o.watchPid());
        }

        String defaultDb = GraphDatabaseSettings.DEFAULT_DATABASE_NAME;
        GraphDatabaseService db = dbms.database(defaultDb);
        if (!db.isAvailable(TimeUnit.MINUTES.toMillis(5))) {
            throw new IllegalStateException("database '" + defaultDb + "' did not become available");
        }
        if (password != null) {
            setPassword(dbms, password);
        }

        String uri = "bolt://127.0.0.1:" + o.port();
        if (o.readyFile() != null) {
            String json = String.format("{\"pid\": %d, \"port\": %d, \"bolt_uri\": \"%s\"}%n",
                    ProcessHandle.current().pid(), o.port(), uri);
            writeAtomically(o.readyFile(), json);
        }
        System.out.printf("kgbench-neo4j: ready on %s (auth %s) after %.1f s%n",
                uri, o.auth() ? "on" : "off", (System.nanoTime() - t0) / 1e9);
        System.out.flush();
        stopped.await();
    }

    /**
     * Sets the built-in {@code neo4j} user's password in the system database. Embedded
     * transactions run with full privileges, so this works in Community Edition without knowing
     * the previous password. Re-setting an unchanged password is rejected by Neo4j; that case
     * is fine and ignored.
     */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        try {
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (QueryExecutionException e) {
            String message = String.valueOf(e.getMessage());
            if (!message.contains("cannot be the same")) {
                throw e;
            }
        }
    }

    /** Exits (running the shutdown hook) once process {@code pid} has ended. */
    private static void watch(long pid) {
        Thread watcher = new Thread(() -> {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
            }
            System.out.println("kgbench-neo4j: watched process " + pid + " is gone");
            System.exit(0);
        }, "kgbench-neo4j-watch");
        watcher.setDaemon(true);
        watcher.start();
    }

    private static String readPassword(Path file) throws IOException {
        String password;
        if (file != null) {
            password = Files.readString(file, StandardCharsets.UTF_8).strip();
        } else {
            password = System.getenv(PASSWORD_ENV);
            if (password == null) {
                throw new IllegalArgumentException("auth is on but no password was given: use"
                        + " --password-file, set " + PASSWORD_ENV + ", or pass --no-auth");
            }
            password = password.strip();
        }
        if (password.length() < 8) {
            throw new IllegalArgumentException("password must be at least 8 characters");
        }
        return password;
    }

    private static void writeAtomically(Path target, String content) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, target.getFileName().toString(), ".tmp");
        try {
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static Options parse(String[] args) {
        Path home = null;
        Integer port = null;
        Path readyFile = null;
        String pagecache = "128m";
        String retention = "2 files";
        Path configFile = null;
        Path passwordFile = null;
        boolean auth = true;
        long watchPid = 0;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--no-auth" -> auth = false;
                case "--home", "--port", "--ready-file", "--pagecache", "--tx-log-retention",
                        "--config", "--password-file", "--watch-pid" -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(arg + " needs a value");
                    }
                    String value = args[++i];
                    switch (arg) {
                        case "--home" -> home = Path.of(value);
                        case "--port" -> port = parsePort(value);
                        case "--ready-file" -> readyFile = Path.of(value);
                        case "--pagecache" -> pagecache = value;
                        case "--tx-log-retention" -> retention = value;
                        case "--config" -> configFile = Path.of(value);
                        case "--watch-pid" -> watchPid = parsePid(value);
                        default -> passwordFile = Path.of(value);
                    }
                }
                default -> throw new IllegalArgumentException("unknown argument: " + arg);
            }
        }
        if (home == null || port == null) {
            throw new IllegalArgumentException("--home and --port are required");
        }
        if (!auth && passwordFile != null) {
            throw new IllegalArgumentException("--no-auth and --password-file exclude each other");
        }
        ByteUnit.parse(pagecache); // fail early on a bad size
        return new Options(home.toAbsolutePath(), port, readyFile, pagecache, retention, configFile,
                passwordFile, auth, watchPid);
    }

    private static long parsePid(String value) {
        try {
            long pid = Long.parseLong(value);
            if (pid < 1) {
                throw new NumberFormatException();
            }
            return pid;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--watch-pid must be a process id, got " + value);
        }
    }

    private static int parsePort(String value) {
        try {
            int port = Integer.parseInt(value);
            if (port < 1 || port > 65535) {
                throw new NumberFormatException();
            }
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--port must be 1..65535, got " + value);
        }
    }
}
