package org.vrdma.control.store;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A consistent snapshot of the store, valid for the duration of one read or write. */
public interface StoreView {
    /** The store revision this view sees: it grows by one with every committed write. */
    long revision();

    Optional<StoredResource> get(String kind, String id);

    /** Every resource of a kind, ordered by id. */
    List<StoredResource> list(String kind);

    Optional<IdempotencyRecord> idempotencyRecord(String token);

    Map<String, Long> countByKind();
}
