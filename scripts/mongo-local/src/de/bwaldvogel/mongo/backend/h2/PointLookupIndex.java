package de.bwaldvogel.mongo.backend.h2;

import java.util.Collection;
import java.util.List;
import java.util.Map.Entry;
import java.util.regex.Pattern;

import de.bwaldvogel.mongo.backend.AbstractUniqueIndex;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.bson.Document;

/**
 * A unique index (the _id index among them) that also answers a query naming each of its keys by
 * plain equality (or, on a single key, `$in`) next to other conditions, as MongoDB's planner does: `{_id, programId, revision}`
 * finds its one candidate through the index, and the collection then matches the whole query
 * against it. mongo-java-server only uses an index when the query's keys are exactly the index's,
 * so every conditional single-document write (a revision check, a redemption limit) scanned the
 * collection. Storage is H2's own index map, untouched (the delegate).
 *
 * In mongo-java-server's package because H2UniqueIndex's storage methods are package-visible.
 */
public final class PointLookupIndex extends AbstractUniqueIndex<Object> {
    private final H2UniqueIndex storage;

    PointLookupIndex(H2UniqueIndex storage, String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
        this.storage = storage;
    }

    @Override
    public synchronized boolean canHandle(Document query) {
        if (super.canHandle(query)) return true;
        if (!query.keySet().containsAll(keySet())) return false;
        for (String key : keys()) {
            Object value = query.get(key);
            if (isInList(value) && !isCompoundIndex()) continue; // {_id: {$in: [...]}, ...}: one lookup per value
            // Plain values only: other operators, arrays, patterns and nulls keep the library's own handling.
            if (value == null || value instanceof Document || value instanceof Collection || value instanceof Pattern) return false;
        }
        return true;
    }

    private static boolean isInList(Object value) {
        return value instanceof Document document && document.size() == 1 && document.get("$in") instanceof Collection;
    }

    @Override
    public synchronized Iterable<Object> getPositions(Document query) {
        if (query.keySet().equals(keySet())) return super.getPositions(query);
        Document keysOnly = new Document();
        for (String key : keys()) keysOnly.put(key, query.get(key));
        return super.getPositions(keysOnly);
    }

    @Override
    protected Object removeDocument(KeyValue keyValue) {
        return storage.removeDocument(keyValue);
    }

    @Override
    protected boolean putKeyPosition(KeyValue keyValue, Object position) {
        return storage.putKeyPosition(keyValue, position);
    }

    @Override
    protected Iterable<Entry<KeyValue, Object>> getIterable() {
        return storage.getIterable();
    }

    @Override
    protected Object getPosition(KeyValue keyValue) {
        return storage.getPosition(keyValue);
    }

    @Override
    public long getCount() {
        return storage.getCount();
    }

    @Override
    public boolean isEmpty() {
        return storage.isEmpty();
    }

    @Override
    public long getDataSize() {
        return storage.getDataSize();
    }

    @Override
    public void drop() {
        storage.drop();
    }
}
