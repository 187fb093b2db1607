import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;

/**
 * A MongoDB-wire-compatible server for tests and local runs without Docker: mongo-java-server
 * with its H2 backend, so data survives a restart (the fault drills stop and start it).
 * Usage: java MongoLocal <data-file> <port>. Listens on 127.0.0.1 only.
 */
public class MongoLocal {
  public static void main(String[] args) throws Exception {
    String dataFile = args.length > 0 ? args[0] : "mongo-local.mv";
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 27017;
    MongoServer server = new MongoServer(new H2Backend(dataFile));
    server.bind("127.0.0.1", port);
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown));
    System.err.println("mongo-local (mongo-java-server, H2) listening on 127.0.0.1:" + port);
    Thread.currentThread().join();
  }
}
