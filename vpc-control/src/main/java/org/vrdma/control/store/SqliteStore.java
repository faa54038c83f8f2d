package org.vrdma.control.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.sqlite.SQLiteConfig;

/**
 * The default store: one SQLite database file in write-ahead-log mode with {@code synchronous=FULL},
 * so a committed transaction is on disk before {@link #write} returns. Writes are serialized on one
 * connection ({@code BEGIN IMMEDIATE}); reads run on a second connection, each in its own
 * transaction, and see a consistent snapshot while writes go on.
 */
public final class SqliteStore implements ResourceStore {
    public static final String FILE_NAME = "control.db";

    private final Connection writer;
    private final Connection reader;
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ReentrantLock readLock = new ReentrantLock();
    private final LatencyListener latency;
    private final List<Integer> migrationsApplied;
    private volatile long revision;

    private SqliteStore(Connection writer, Connection reader, LatencyListener latency, List<Integer> applied)
            throws SQLException {
        this.writer = writer;
        this.reader = reader;
        this.latency = latency;
        this.migrationsApplied = applied;
        this.revision = readRevision(writer);
    }

    /** Opens (creating when needed) the store in {@code dataDir}, and migrates its schema. */
    public static SqliteStore open(Path dataDir, LatencyListener latency) {
        try {
            Files.createDirectories(dataDir);
            Path file = dataDir.resolve(FILE_NAME);
            String url = "jdbc:sqlite:" + file.toAbsolutePath();
            Connection writer = connect(url, SQLiteConfig.TransactionMode.IMMEDIATE);
            List<Integer> applied = Migrations.migrate(writer);
            writer.setAutoCommit(false);
            Connection reader = connect(url, SQLiteConfig.TransactionMode.DEFERRED);
            reader.setAutoCommit(false);
            return new SqliteStore(writer, reader, latency == null ? (op, s) -> {} : latency, applied);
        } catch (SQLException | IOException e) {
            throw new StoreException("cannot open the store in " + dataDir + ": " + e.getMessage(), e);
        }
    }

    private static Connection connect(String url, SQLiteConfig.TransactionMode mode) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
        config.setBusyTimeout(10_000);
        config.enforceForeignKeys(true);
        config.setTransactionMode(mode);
        return config.createConnection(url);
    }

    /** Schema versions this open applied (empty when the file was already current). */
    public List<Integer> migrationsApplied() {
        return migrationsApplied;
    }

    public int schemaVersion() {
        return read(view -> {
            try {
                return Migrations.currentVersion(reader);
            } catch (SQLException e) {
                throw new StoreException("cannot read the schema version", e);
            }
        });
    }

    @Override
    public long revision() {
        return revision;
    }

    @Override
    public <T> T read(Function<StoreView, T> work) {
        long start = System.nanoTime();
        readLock.lock();
        try {
            try {
                T result = work.apply(new View(reader, readRevision(reader)));
                reader.commit();
                return result;
            } catch (RuntimeException e) {
                rollbackQuietly(reader);
                throw e;
            }
        } catch (SQLException e) {
            throw new StoreException("read failed: " + e.getMessage(), e);
        } finally {
            readLock.unlock();
            latency.observe("read", (System.nanoTime() - start) / 1e9);
        }
    }

    @Override
    public <T> T write(Function<StoreTransaction, T> work) {
        long start = System.nanoTime();
        writeLock.lock();
        try {
            Tx tx;
            try {
                tx = new Tx(writer, readRevision(writer));
                T result = work.apply(tx);
                if (tx.dirty) {
                    try (PreparedStatement ps =
                            writer.prepareStatement("UPDATE meta SET value = ? WHERE key = 'revision'")) {
                        ps.setLong(1, tx.next);
                        ps.executeUpdate();
                    }
                    writer.commit();
                    revision = tx.next;
                } else {
                    writer.rollback();
                }
                return result;
            } catch (RuntimeException e) {
                rollbackQuietly(writer);
                throw e;
            } catch (SQLException e) {
                rollbackQuietly(writer);
                throw e;
            }
        } catch (SQLException e) {
            throw new StoreException("write failed: " + e.getMessage(), e);
        } finally {
            writeLock.unlock();
            latency.observe("write", (System.nanoTime() - start) / 1e9);
        }
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // The connection is unusable anyway; the original failure is what matters.
        }
    }

    private static long readRevision(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT value FROM meta WHERE key = 'revision'")) {
            return rs.next() ? rs.getLong(1) : 0;
        }
    }

    @Override
    public void close() {
        writeLock.lock();
        readLock.lock();
        try {
            reader.close();
            writer.close();
        } catch (SQLException e) {
            throw new StoreException("close failed", e);
        } finally {
            readLock.unlock();
            writeLock.unlock();
        }
    }

    private static class View implements StoreView {
        final Connection c;
        final long revision;

        View(Connection c, long revision) {
            this.c = c;
            this.revision = revision;
        }

        @Override
        public long revision() {
            return revision;
        }

        @Override
        public Optional<StoredResource> get(String kind, String id) {
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT version, revision, body FROM resources WHERE kind = ? AND id = ?")) {
                ps.setString(1, kind);
                ps.setString(2, id);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next()
                            ? Optional.of(new StoredResource(kind, id, rs.getLong(1), rs.getLong(2), rs.getString(3)))
                            : Optional.empty();
                }
            } catch (SQLException e) {
                throw new StoreException("get failed: " + e.getMessage(), e);
            }
        }

        @Override
        public List<StoredResource> list(String kind) {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT id, version, revision, body FROM resources WHERE kind = ? ORDER BY id")) {
                ps.setString(1, kind);
                List<StoredResource> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new StoredResource(
                                kind, rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getString(4)));
                    }
                }
                return out;
            } catch (SQLException e) {
                throw new StoreException("list failed: " + e.getMessage(), e);
            }
        }

        @Override
        public Optional<IdempotencyRecord> idempotencyRecord(String token) {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT kind, request_hash, resource_id, response FROM idempotency_keys WHERE token = ?")) {
                ps.setString(1, token);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next()
                            ? Optional.of(new IdempotencyRecord(
                                    token, rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)))
                            : Optional.empty();
                }
            } catch (SQLException e) {
                throw new StoreException("idempotency lookup failed: " + e.getMessage(), e);
            }
        }

        @Override
        public Map<String, Long> countByKind() {
            try (Statement st = c.createStatement();
                    ResultSet rs =
                            st.executeQuery("SELECT kind, COUNT(*) FROM resources GROUP BY kind ORDER BY kind")) {
                Map<String, Long> out = new LinkedHashMap<>();
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getLong(2));
                }
                return out;
            } catch (SQLException e) {
                throw new StoreException("count failed: " + e.getMessage(), e);
            }
        }
    }

    private static final class Tx extends View implements StoreTransaction {
        final long next;
        boolean dirty;

        Tx(Connection c, long revision) {
            super(c, revision);
            this.next = revision + 1;
        }

        @Override
        public void put(String kind, String id, long version, String body) {
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO resources (kind, id, version, revision, body) VALUES (?, ?, ?, ?, ?) "
                            + "ON CONFLICT (kind, id) DO UPDATE SET version = excluded.version, "
                            + "revision = excluded.revision, body = excluded.body")) {
                ps.setString(1, kind);
                ps.setString(2, id);
                ps.setLong(3, version);
                ps.setLong(4, next);
                ps.setString(5, body);
                ps.executeUpdate();
                dirty = true;
            } catch (SQLException e) {
                throw new StoreException("put failed: " + e.getMessage(), e);
            }
        }

        @Override
        public boolean delete(String kind, String id) {
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM resources WHERE kind = ? AND id = ?")) {
                ps.setString(1, kind);
                ps.setString(2, id);
                boolean deleted = ps.executeUpdate() > 0;
                dirty |= deleted;
                return deleted;
            } catch (SQLException e) {
                throw new StoreException("delete failed: " + e.getMessage(), e);
            }
        }

        @Override
        public void putIdempotencyRecord(IdempotencyRecord r) {
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO idempotency_keys (token, kind, request_hash, resource_id, response, revision) "
                            + "VALUES (?, ?, ?, ?, ?, ?)")) {
                ps.setString(1, r.token());
                ps.setString(2, r.kind());
                ps.setString(3, r.requestHash());
                ps.setString(4, r.resourceId());
                ps.setString(5, r.response());
                ps.setLong(6, next);
                ps.executeUpdate();
                dirty = true;
            } catch (SQLException e) {
                throw new StoreException("idempotency record failed: " + e.getMessage(), e);
            }
        }
    }
}
