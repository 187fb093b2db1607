import { backOff } from 'exponential-backoff';
import mongoose, { type Connection } from 'mongoose';
import { isCollectionCreationRace } from './errors';
import type { Logger } from './logger';

export type MongoOptions = { url: string; dbName: string; logger: Logger; maxAttempts?: number };

/**
 * Opens the service's own database, retrying while the server is not up yet (containers start in
 * any order). After that the driver reconnects by itself; requests fail fast with 503 meanwhile
 * because command buffering is off.
 */
export async function connectMongo(options: MongoOptions): Promise<Connection> {
  return backOff(
    async () => {
      const connection = mongoose.createConnection(options.url, {
        dbName: options.dbName,
        serverSelectionTimeoutMS: 5000,
        bufferCommands: false,
        // Built by syncIndexes, after a service has brought older data to the current shape (ServiceParts.prepare).
        autoIndex: false,
        // Created by syncIndexes too, where replicas racing to create one collection are handled.
        autoCreate: false,
      });
      try {
        await connection.asPromise();
      } catch (error) {
        await connection.close(true).catch(() => undefined);
        throw error;
      }
      connection.on('disconnected', () =>
        options.logger.warn({ dbName: options.dbName }, 'MongoDB disconnected; the driver is reconnecting'),
      );
      connection.on('reconnected', () => options.logger.info({ dbName: options.dbName }, 'MongoDB reconnected'));
      options.logger.info({ dbName: options.dbName }, 'MongoDB connected');
      return connection;
    },
    {
      numOfAttempts: options.maxAttempts ?? 30,
      startingDelay: 500,
      maxDelay: 5000,
      retry: (error: unknown, attempt) => {
        options.logger.warn({ err: error, attempt }, 'MongoDB not reachable yet; retrying');
        return true;
      },
    },
  );
}

/** Ready means the connection is open right now, not merely that it once was. */
export function isMongoReady(connection: Connection): boolean {
  return connection.readyState === mongoose.ConnectionStates.connected;
}

/**
 * Indexes are part of the contract (uniqueness); build them before serving traffic. Replicas starting
 * together create the same collections at once: MongoDB answers the loser "already exists" (which
 * mongoose accepts), the local server an error of its own, after which the collection exists; so the
 * loser tries again.
 */
export async function syncIndexes(connection: Connection): Promise<void> {
  await Promise.all(
    Object.values(connection.models).map(async (model) => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          await model.createCollection();
          break;
        } catch (error) {
          if (!isCollectionCreationRace(error) || attempt >= 5) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        }
      }
      await model.createIndexes();
    }),
  );
}
