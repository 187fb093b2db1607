package de.bwaldvogel.mongo.backend.h2;

import java.nio.ByteBuffer;

import org.h2.mvstore.DataUtils;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Stores a collection's documents as BSON, where H2's default type stores them with Java object
 * serialisation. Every commit writes the pages a write changed, each page with all its documents,
 * and serialising those was the largest part of the server's CPU under write load (bench/README.md). A document
 * is stored as it came over the wire, so what goes in comes back out as it would in a reply.
 *
 * Files written before keep their documents in the old form: a value without this type's tag is
 * read by H2's own type, and written back as BSON when its page is next written.
 */
final class BsonDocumentType extends BasicDataType<Document> {
    /** Above every tag H2's ObjectDataType writes (0 to 119), so the two forms never collide. */
    private static final byte BSON_TAG = 127;
    /** The largest document BsonDecoder reads back (MongoDB's limit). */
    static final int MAX_BSON_BYTES = 16 * 1024 * 1024;

    private final ObjectDataType earlierForm = new ObjectDataType();
    /** What a document takes in memory, for H2's page sizes and cache: a running average of their sizes. */
    private volatile int averageSize = 1024;

    @Override
    public int getMemory(Document document) {
        return averageSize;
    }

    @Override
    public void write(WriteBuffer buffer, Document document) {
        byte[] bson = bsonOf(document);
        if (bson == null) {
            // A commit that cannot write a value closes the whole store (H2 panics): a document BSON
            // cannot carry is written in H2's own form, which reads back as before.
            BsonKeyValueType.sayOnce("a document is stored in H2's own form: BSON cannot carry it, or it is past 16 MB");
            earlierForm.write(buffer, document);
            return;
        }
        averageSize = (bson.length * 2 + 64 + 15 * averageSize) / 16;
        buffer.put(BSON_TAG).putVarInt(bson.length).put(bson);
    }

    /** The document's BSON, or null when the encoder refuses it or its size is past what the decoder reads back. */
    private byte[] bsonOf(Document document) {
        ByteBuf bson = Unpooled.buffer(averageSize);
        try {
            BsonEncoder.encodeDocument(document, bson);
            if (bson.readableBytes() > MAX_BSON_BYTES) return null;
            byte[] bytes = new byte[bson.readableBytes()];
            bson.readBytes(bytes);
            return bytes;
        } catch (RuntimeException notBson) {
            return null;
        } finally {
            bson.release();
        }
    }

    @Override
    public Document read(ByteBuffer buffer) {
        if (buffer.get(buffer.position()) != BSON_TAG) return (Document) earlierForm.read(buffer);
        buffer.get();
        int size = DataUtils.readVarInt(buffer);
        ByteBuf bson = Unpooled.wrappedBuffer(buffer.slice(buffer.position(), size));
        buffer.position(buffer.position() + size);
        return BsonDecoder.decodeBson(bson);
    }

    /** H2 compares values only for a conditional replace or remove, which the library does not ask for: its own comparison serves. */
    @Override
    public int compare(Document a, Document b) {
        return earlierForm.compare(a, b);
    }

    @Override
    public Document[] createStorage(int size) {
        return new Document[size];
    }
}
