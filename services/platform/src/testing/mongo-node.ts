import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort, waitForPort } from './rabbit-node';

const MONGO_HOME = join(__dirname, '..', '..', '..', '..', '.local-infra', 'mongo-local');
/**
 * Shenandoah: its pauses stay under a millisecond, where SerialGC's young collections stopped the
 * server for 150 to 700 ms on a busy machine, the tail of the event latency (bench/README.md, "Where
 * the tail comes from"). The heap starts small and grows as needed, up to the same 512 MB as the shared
 * server of scripts/local-infra.sh. Not lower: with 50,000 sales stored (bounded-reads.memory.test.ts)
 * the live set is about 100 MB, and a 192 MB cap kept Shenandoah collecting back to back and falling
 * into degenerated and full collections, until on a loaded CI machine one report took longer than 290 s.
 */
const MONGO_JVM_OPTIONS = ['-XX:+UseShenandoahGC', '-Xms32m', '-Xmx512m'];

export type DisposableMongo = {
  url: string;
  /** The server's data file: what a crash leaves behind is what was committed to it. */
  dataFile: string;
  stop: () => Promise<void>;
  /** SIGKILL: the process gets no chance to flush anything, as in a crash or an OOM kill. */
  kill: () => Promise<void>;
  start: () => Promise<void>;
  destroy: () => Promise<void>;
};

/**
 * A MongoDB-compatible server of a test's own (scripts/mongo-local, built by scripts/local-infra.sh),
 * with its data in a file that survives stop and start, so a test can really take the database away.
 */
export async function startDisposableMongo(): Promise<DisposableMongo> {
  if (!existsSync(join(MONGO_HOME, 'classes', 'MongoLocal.class'))) {
    throw new Error('mongo-local is not built: run `npm run infra -- start` first');
  }
  const port = await freePort();
  const dataFile = join(mkdtempSync(join(tmpdir(), 'mongo-test-')), 'data.mv');
  let server: ChildProcess | undefined;
  const start = async () => {
    server = spawn(
      'java',
      [
        ...MONGO_JVM_OPTIONS,
        // The bench asks for the GC log (its pauses beside the slowest events); `time` puts wall-clock times on it.
        ...(process.env.MONGO_LOCAL_GC_LOG ? [`-Xlog:gc:file=${process.env.MONGO_LOCAL_GC_LOG}:time`] : []),
        '-cp',
        `${MONGO_HOME}/classes:${MONGO_HOME}/lib/*`,
        'MongoLocal',
        dataFile,
        String(port),
      ],
      {
        stdio: 'ignore',
      },
    );
    await waitForPort(port, true, 60_000);
  };
  const ending = (signal: NodeJS.Signals) => async () => {
    server?.kill(signal);
    await waitForPort(port, false, 30_000);
  };
  // The data file goes with the server: test runs left gigabytes of them in the temporary directory.
  const destroy = async () => {
    await ending('SIGTERM')();
    rmSync(dirname(dataFile), { recursive: true, force: true });
  };
  await start();
  return { url: `mongodb://127.0.0.1:${port}`, dataFile, start, stop: ending('SIGTERM'), kill: ending('SIGKILL'), destroy };
}
