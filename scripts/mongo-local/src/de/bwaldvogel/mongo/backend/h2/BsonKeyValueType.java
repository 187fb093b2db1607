package de.bwaldvogel.mongo.backend.h2;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.h2.mvstore.DataUtils;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The keys of a unique index, stored and ordered by their BSON form. H2's default type serialises a
 * key with Java object serialisation, and orders two keys by serialising both, so every step of every
 * lookup's binary search serialised two keys: much of the server's CPU under write load
 * (bench/README.md). Here a lookup encodes the key it looks for once, and each key it passes on the
 * way, in BSON, which costs a fraction of that. A unique index is only asked for equal keys, never for
 * a range, so any order that is the same for equal keys serves; equal keys (the library normalises
 * them: numbers to one type, a missing field to null) have equal BSON.
 *
 * The order differs from the default type's, so only indexes created with this type use it
 * (PointLookupH2Database). Should a key ever hold a value BSON cannot carry, or pass 16 MB, it keeps the Java form,
 * which is never mistaken for BSON: that starts with 0xAC, this type's with its tag.
 */
final class BsonKeyValueType extends BasicDataType<KeyValue> {
    private static final byte BSON_TAG = 127;

    @Override
    public int getMemory(KeyValue key) {
        return 48 + 24 * key.size();
    }

    @Override
    public void write(WriteBuffer buffer, KeyValue key) {
        byte[] form = formOf(key);
        buffer.putVarInt(form.length).put(form);
    }

    @Override
    public KeyValue read(ByteBuffer buffer) {
        byte[] form = new byte[DataUtils.readVarInt(buffer)];
        buffer.get(form);
        if (form[0] != BSON_TAG) return (KeyValue) ObjectDataType.deserialize(form);
        Document values = BsonDecoder.decodeBson(Unpooled.wrappedBuffer(form, 1, form.length - 1));
        return new KeyValue(values.values());
    }

    @Override
    public int compare(KeyValue a, KeyValue b) {
        return a == b ? 0 : Arrays.compareUnsigned(formOf(a), formOf(b));
    }

    /** As H2's own binary search (the index found, or -(insertion point) - 1), encoding the key looked for once. */
    @Override
    public int binarySearch(KeyValue key, Object storage, int size, int initialGuess) {
        KeyValue[] keys = cast(storage);
        byte[] sought = formOf(key);
        int low = 0;
        int high = size - 1;
        int middle = initialGuess - 1;
        if (middle < 0 || middle > high) middle = high >>> 1;
        while (low <= high) {
            int order = Arrays.compareUnsigned(sought, formOf(keys[middle]));
            if (order > 0) low = middle + 1;
            else if (order < 0) high = middle - 1;
            else return middle;
            middle = (low + high) >>> 1;
        }
        return -(low + 1);
    }

    private static byte[] javaFormOf(KeyValue key) {
        sayOnce("an index key is stored in H2's own form: BSON cannot carry it, or it is past 16 MB");
        return ObjectDataType.serialize(key);
    }

    private static final AtomicBoolean SAID = new AtomicBoolean();

    /** The old form is a safety net, not a path taken: the first use of either type's is said, so that a change that makes it common shows. */
    static void sayOnce(String what) {
        if (SAID.compareAndSet(false, true)) System.err.println("mongo-local: " + what + " (said once)");
    }

    @Override
    public KeyValue[] createStorage(int size) {
        return new KeyValue[size];
    }

    /** The tag and the key's values as a BSON document {"0": ..., "1": ...}; the Java form when BSON cannot carry them. */
    private static byte[] formOf(KeyValue key) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (int index = 0; index < key.size(); index++) values.put(String.valueOf(index), key.get(index));
        ByteBuf bson = Unpooled.buffer(64);
        try {
            bson.writeByte(BSON_TAG);
            BsonEncoder.encodeDocument(values, bson);
            if (bson.readableBytes() > BsonDocumentType.MAX_BSON_BYTES) return javaFormOf(key);
            byte[] form = new byte[bson.readableBytes()];
            bson.readBytes(form);
            return form;
        } catch (RuntimeException notBson) {
            return javaFormOf(key);
        } finally {
            bson.release();
        }
    }
}
