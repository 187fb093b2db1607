import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.PointLookupH2Database;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import org.h2.mvstore.MVStore;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A MongoDB-wire-compatible server for tests and local runs without Docker: mongo-java-server
 * with its H2 backend, so data survives a restart (the fault drills stop and start it).
 * Usage: java MongoLocal <data-file> <port>. Listens on 127.0.0.1 only.
 *
 * Three changes to the library's behaviour, all towards what MongoDB does: each write is committed
 * before it is answered (below), a query with equality on every key of a unique index (the _id
 * index among them) plus further conditions is answered through that index (PointLookupIndex), and
 * documents and index keys are stored as BSON, not with Java object serialisation (BsonDocumentType,
 * BsonKeyValueType), which had been the largest part of the server's CPU under write load.
 *
 * Every command that changed something is committed to the data file before it is answered. H2's
 * MVStore otherwise commits about once a second in the background, and a killed server lost the
 * last second of acknowledged writes. Concurrent writers share commits (group commit), so the
 * cost per write falls as writers queue up. The commit writes to the file, which survives
 * a crash of this process; it does not force the operating system to flush to disk (see
 * RELIABILITY.md for what that leaves open, and what a MongoDB replica set adds).
 *
 * A commit only ever holds whole commands. A command writes a document and then its index entries
 * as separate map writes; H2's own commits or a commit running beside a command could land between
 * the two, and a kill right after left a document its _id index did not know (an upsert then failed
 * with "already existed" forever). Write commands run under a shared lock, and a commit takes it
 * exclusively: it waits for the commands in flight to finish. H2 commits by itself in two ways, and
 * both are off: in the background about once a second (autoCommitDelay), and inside a writing thread
 * once the unsaved changes pass a buffer of about 19 MB (autoCommitBufferSize), which a bulk insert or
 * an updateMany reaches in the middle of the command.
 */
public class MongoLocal {
  static final class CommittingH2Backend extends H2Backend {
    private static final Set<String> WRITE_COMMANDS = Set.of(
        "insert", "update", "delete", "findandmodify", "create", "createindexes", "drop", "dropindexes",
        "dropdatabase", "renamecollection", "collmod");
    private final Object commitLock = new Object();
    /** Commits begun so far, numbered; a commit numbered above what a writer read began after its write. */
    private final AtomicLong begun = new AtomicLong();
    /** The number of the last commit that finished (guarded by commitLock). */
    private long finished = 0;
    /** Shared by the write commands in flight; taken exclusively by a commit. */
    private final ReentrantReadWriteLock wholeCommands = new ReentrantReadWriteLock();

    /** False only to measure what committing each write costs (MONGO_LOCAL_COMMIT=background). */
    private final boolean commitEachWrite;

    CommittingH2Backend(String dataFile, boolean commitEachWrite) {
      super(commitEachWrite
          ? new MVStore.Builder().fileName(dataFile).autoCommitDisabled().autoCommitBufferSize(0).open()
          : MVStore.open(dataFile));
      this.commitEachWrite = commitEachWrite;
    }

    /** Unique indexes (with _id) also serve `{_id: x, ...other conditions}`: see PointLookupIndex. */
    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
      return new PointLookupH2Database(databaseName, getMvStore(), getCursorRegistry());
    }

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
      boolean writes = commitEachWrite && WRITE_COMMANDS.contains(command.toLowerCase(Locale.ROOT));
      if (!writes) return super.handleCommand(channel, databaseName, command, query);
      wholeCommands.readLock().lock();
      try {
        return super.handleCommand(channel, databaseName, command, query);
      } finally {
        wholeCommands.readLock().unlock();
        // Also after a failed command: an ordered insert can fail halfway with its first part written.
        // Decided by the command, not by hasUnsavedChanges(): that turns false as soon as a commit
        // has begun, before the change is in the file.
        commitCovering(begun.get() + 1);
      }
    }

    /**
     * Group commit: waits until a commit numbered at least `needed` (one that began after the
     * caller's write) has finished, running it if nobody has. Writers that queue behind a commit
     * share the next one instead of each writing a chunk of their own.
     */
    private void commitCovering(long needed) {
      synchronized (commitLock) {
        if (finished >= needed) return;
        long number = begun.incrementAndGet();
        wholeCommands.writeLock().lock();
        try {
          commit();
        } finally {
          wholeCommands.writeLock().unlock();
        }
        finished = number;
      }
    }
  }

  public static void main(String[] args) throws Exception {
    String dataFile = args.length > 0 ? args[0] : "mongo-local.mv";
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 27017;
    // The library's own behaviour (a commit about once a second), for `npm run bench` to compare against.
    boolean commitEachWrite = !"background".equals(System.getenv("MONGO_LOCAL_COMMIT"));
    MongoServer server = new MongoServer(new CommittingH2Backend(dataFile, commitEachWrite));
    server.bind("127.0.0.1", port);
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown));
    System.err.println("mongo-local (mongo-java-server, H2, " + (commitEachWrite ? "commit per write" : "background commit")
        + ") listening on 127.0.0.1:" + port);
    Thread.currentThread().join();
  }
}
