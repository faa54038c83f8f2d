package org.vrdma.control.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The SQLite store: migrations, WAL mode, revisions, rollback and the database-level uniqueness. */
class SqliteStoreTest {
    @TempDir
    Path dir;

    @Test
    void migrationsRunOnceInOrderAndAreRecorded() throws Exception {
        try (SqliteStore store = SqliteStore.open(dir, null)) {
            assertThat(store.migrationsApplied()).containsExactly(1, 2);
            assertThat(store.schemaVersion()).isEqualTo(Migrations.latestVersion());
        }
        try (SqliteStore store = SqliteStore.open(dir, null)) {
            assertThat(store.migrationsApplied()).isEmpty();
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
                Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT version, script FROM schema_version ORDER BY version")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(2)).isEqualTo("V1__resources.sql");
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(2);
                assertThat(rs.next()).isFalse();
            }
            try (ResultSet rs = st.executeQuery("PRAGMA journal_mode")) {
                assertThat(rs.getString(1)).isEqualTo("wal");
            }
        }
    }

    @Test
    void aStoreFromANewerReleaseIsRefused() throws Exception {
        SqliteStore.open(dir, null).close();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
                Statement st = c.createStatement()) {
            st.execute("INSERT INTO schema_version VALUES (99, 'V99__future.sql', datetime('now'))");
        }
        assertThatThrownBy(() -> SqliteStore.open(dir, null))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("schema version 99");
    }

    @Test
    void writesBumpTheRevisionAndFailuresRollBack() {
        try (SqliteStore store = SqliteStore.open(dir, null)) {
            assertThat(store.revision()).isZero();
            store.write(tx -> {
                tx.put("vpc", "vpc-1", 1, "{\"id\":\"vpc-1\",\"vni\":1000}");
                return null;
            });
            assertThat(store.revision()).isEqualTo(1);
            assertThatThrownBy(() -> store.write(tx -> {
                        tx.put("vpc", "vpc-2", 1, "{\"id\":\"vpc-2\",\"vni\":1001}");
                        throw new IllegalStateException("validation failed");
                    }))
                    .hasMessage("validation failed");
            assertThat(store.revision()).isEqualTo(1);
            java.util.Optional<StoredResource> gone = store.read(v -> v.get("vpc", "vpc-2"));
            assertThat(gone).isEmpty();
            // A read-only transaction does not move the revision.
            store.write(tx -> tx.get("vpc", "vpc-1"));
            assertThat(store.revision()).isEqualTo(1);
            assertThat(store.read(v -> v.get("vpc", "vpc-1")).orElseThrow().revision())
                    .isEqualTo(1);
        }
    }

    @Test
    void theDatabaseItselfRefusesADuplicateVniOrAddress() {
        try (SqliteStore store = SqliteStore.open(dir, null)) {
            store.write(tx -> {
                tx.put("vpc", "vpc-1", 1, "{\"vni\":1000}");
                tx.put("eni", "eni-1", 1, "{\"subnetId\":\"s\",\"ip\":\"10.0.0.2\",\"mac\":\"02:00:00:00:00:01\"}");
                return null;
            });
            assertThatThrownBy(() -> store.write(tx -> {
                        tx.put("vpc", "vpc-2", 1, "{\"vni\":1000}");
                        return null;
                    }))
                    .isInstanceOf(StoreException.class)
                    .hasMessageContaining("UNIQUE");
            assertThatThrownBy(() -> store.write(tx -> {
                        tx.put(
                                "eni",
                                "eni-2",
                                1,
                                "{\"subnetId\":\"s\",\"ip\":\"10.0.0.2\",\"mac\":\"02:00:00:00:00:02\"}");
                        return null;
                    }))
                    .isInstanceOf(StoreException.class)
                    .hasMessageContaining("UNIQUE");
            java.util.Map<String, Long> counts = store.read(v -> v.countByKind());
            assertThat(counts).containsEntry("vpc", 1L).containsEntry("eni", 1L);
        }
    }
}
