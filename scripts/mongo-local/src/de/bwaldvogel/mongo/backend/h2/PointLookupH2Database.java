package de.bwaldvogel.mongo.backend.h2;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

/**
 * An H2 database whose unique indexes also serve equality lookups with further conditions
 * ({@link PointLookupIndex}), and whose collections store their documents as BSON ({@link BsonDocumentType}).
 */
public final class PointLookupH2Database extends H2Database {
    /**
     * The library's own reference to the store. Its constructor opens the existing collections
     * (openOrCreateCollection, below) before a subclass could keep the store itself, but after it
     * has set this field.
     */
    private static final VarHandle STORE;
    /**
     * Index map name to the form of its keys: only indexes created with BSON keys are in it. Named so
     * that no database's drop removes it: that removes the maps named after the database and a dot,
     * and those beginning with "databases." or "meta." and its name.
     */
    private static final String KEY_FORMATS = "mongo-local/index-key-formats";
    private static final String BSON_KEYS = "bson";

    static {
        try {
            STORE = MethodHandles.privateLookupIn(H2Database.class, MethodHandles.lookup()).findVarHandle(H2Database.class, "mvStore", MVStore.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public PointLookupH2Database(String databaseName, MVStore mvStore, CursorRegistry cursorRegistry) {
        super(databaseName, mvStore, cursorRegistry);
    }

    /**
     * As the library opens an index (the same map name), with keys in their BSON form
     * ({@link BsonKeyValueType}) when the index is created here. One a file holds from before keeps
     * H2's default type, whose order its entries were stored in: the names of the indexes created with
     * BSON keys are kept in a map of their own, committed with the index.
     */
    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        MVStore mvStore = (MVStore) STORE.get(this);
        String name = indexMapName(collectionName, indexName);
        MVMap<String, String> formats = keyFormats();
        if (!mvStore.hasMap(name)) formats.put(name, BSON_KEYS);
        MVMap<KeyValue, Object> entries = BSON_KEYS.equals(formats.get(name))
            ? mvStore.openMap(name, new MVMap.Builder<KeyValue, Object>().keyType(new BsonKeyValueType()))
            : mvStore.openMap(name);
        H2UniqueIndex storage = new H2UniqueIndex(entries, indexName, keys, sparse);
        return new PointLookupIndex(storage, indexName, keys, sparse);
    }

    /** The index's map is gone: a new one of the same name is created with BSON keys again. */
    @Override
    protected void dropIndex(MongoCollection<Object> collection, String indexName) {
        super.dropIndex(collection, indexName);
        keyFormats().remove(indexMapName(collection.getCollectionName(), indexName));
    }

    /** The database's maps are gone, and with them what is recorded of its indexes. */
    @Override
    public void drop(Oplog oplog) {
        super.drop(oplog);
        String prefix = getDatabaseName() + ".";
        MVMap<String, String> formats = keyFormats();
        List<String> dropped = new ArrayList<>();
        for (String name : formats.keySet()) if (name.startsWith(prefix)) dropped.add(name);
        for (String name : dropped) formats.remove(name);
    }

    private MVMap<String, String> keyFormats() {
        return ((MVStore) STORE.get(this)).openMap(KEY_FORMATS);
    }

    /** The library's name for an index's map (H2Database.mapNameForIndex, private there). */
    private String indexMapName(String collectionName, String indexName) {
        return getFullCollectionNamespace(collectionName) + "._index_" + indexName;
    }

    /** As the library opens a collection (the same map names), with the documents' map storing BSON. */
    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
        String namespace = getFullCollectionNamespace(collectionName);
        MVStore mvStore = (MVStore) STORE.get(this);
        MVMap<Object, Document> documents = mvStore.openMap("databases." + namespace, new MVMap.Builder<Object, Document>().valueType(new BsonDocumentType()));
        MVMap<String, Object> meta = mvStore.openMap("meta." + namespace);
        return new H2Collection(this, collectionName, options, documents, meta, cursorRegistry);
    }
}
