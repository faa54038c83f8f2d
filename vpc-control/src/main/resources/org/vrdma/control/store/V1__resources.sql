-- Every resource is one row: its JSON body plus the columns the store itself needs.
CREATE TABLE resources (
    kind     TEXT    NOT NULL,
    id       TEXT    NOT NULL,
    version  INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    body     TEXT    NOT NULL,
    PRIMARY KEY (kind, id)
);

-- The store revision: one more with every committed write.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO meta (key, value) VALUES ('revision', 0);

-- Outcomes of creates made with a client token.
CREATE TABLE idempotency_keys (
    token        TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    response     TEXT NOT NULL,
    revision     INTEGER NOT NULL
);
