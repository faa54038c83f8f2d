package org.vrdma.control.store;

/** A write transaction: every change commits together when the work returns, or none does. */
public interface StoreTransaction extends StoreView {
    /** Inserts or replaces a resource; it is stamped with the revision this transaction commits. */
    void put(String kind, String id, long version, String body);

    /** Deletes a resource; false when it did not exist. */
    boolean delete(String kind, String id);

    void putIdempotencyRecord(IdempotencyRecord record);
}
