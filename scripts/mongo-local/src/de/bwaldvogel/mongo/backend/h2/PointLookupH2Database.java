package de.bwaldvogel.mongo.backend.h2;

import java.util.List;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;

/** An H2 database whose unique indexes also serve equality lookups with further conditions ({@link PointLookupIndex}). */
public final class PointLookupH2Database extends H2Database {
    public PointLookupH2Database(String databaseName, MVStore mvStore, CursorRegistry cursorRegistry) {
        super(databaseName, mvStore, cursorRegistry);
    }

    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        H2UniqueIndex storage = (H2UniqueIndex) super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse);
        return new PointLookupIndex(storage, indexName, keys, sparse);
    }
}
