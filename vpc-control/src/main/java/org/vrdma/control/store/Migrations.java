package org.vrdma.control.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Versioned schema migrations: ordered SQL scripts next to this class, applied each in its own
 * transaction, each recorded in {@code schema_version}. A database written by a newer release
 * (a version this code does not know) is refused rather than misread.
 */
public final class Migrations {
    /** In order; the number before {@code __} is the schema version a script brings the store to. */
    public static final List<String> SCRIPTS = List.of("V1__resources.sql", "V2__unique_allocations.sql");

    private Migrations() {}

    public static int latestVersion() {
        return versionOf(SCRIPTS.getLast());
    }

    static int versionOf(String script) {
        return Integer.parseInt(script.substring(1, script.indexOf("__")));
    }

    /** Brings the schema up to date and returns the versions applied now (empty when current). */
    public static List<Integer> migrate(Connection connection) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try {
            try (Statement st = connection.createStatement()) {
                st.execute("CREATE TABLE IF NOT EXISTS schema_version ("
                        + "version INTEGER PRIMARY KEY, script TEXT NOT NULL, applied_at TEXT NOT NULL)");
            }
            connection.commit();
            int current = currentVersion(connection);
            if (current > latestVersion()) {
                throw new SQLException("the store has schema version " + current + " but this release knows only up to "
                        + latestVersion() + "; upgrade the controller");
            }
            List<Integer> applied = new ArrayList<>();
            for (String script : SCRIPTS) {
                int version = versionOf(script);
                if (version <= current) {
                    continue;
                }
                try (Statement st = connection.createStatement()) {
                    for (String sql : statements(load(script))) {
                        st.execute(sql);
                    }
                }
                try (PreparedStatement ps = connection.prepareStatement(
                        "INSERT INTO schema_version (version, script, applied_at) VALUES (?, ?, datetime('now'))")) {
                    ps.setInt(1, version);
                    ps.setString(2, script);
                    ps.executeUpdate();
                }
                connection.commit();
                applied.add(version);
            }
            return applied;
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(autoCommit);
        }
    }

    public static int currentVersion(Connection connection) throws SQLException {
        try (Statement st = connection.createStatement();
                ResultSet rs = st.executeQuery("SELECT COALESCE(MAX(version), 0) FROM schema_version")) {
            return rs.next() ? rs.getInt(1) : 0;
        }
    }

    private static String load(String script) {
        try (InputStream in = Migrations.class.getResourceAsStream(script)) {
            if (in == null) {
                throw new IllegalStateException("migration script " + script + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read migration script " + script, e);
        }
    }

    /** Splits a script into statements: drops comment lines, cuts at semicolons ending a line. */
    static List<String> statements(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            String trimmed = line.strip();
            if (trimmed.startsWith("--") || trimmed.isEmpty()) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.endsWith(";")) {
                out.add(current.toString().strip().replaceAll(";$", ""));
                current.setLength(0);
            }
        }
        if (!current.toString().isBlank()) {
            out.add(current.toString().strip());
        }
        return out;
    }
}
