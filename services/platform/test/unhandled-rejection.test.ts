import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * A rejected promise nobody handles ends a running component (its supervisor starts a clean one), as
 * Node's default does, after a log line that says why. Run as its own process on the built platform,
 * the way every component's start.ts installs the handlers.
 */
test('an unhandled rejection ends the process with status 1, logged first', async () => {
  const platform = join(__dirname, '..', 'dist', 'index.js');
  const script = `
    const { createLogger, stopOnSignals } = require(${JSON.stringify(platform)});
    stopOnSignals({ stop: async () => undefined }, createLogger('unhandled-test', 'info'));
    setTimeout(() => process.exit(0), 20000); // what would happen if the rejection were only logged
    Promise.reject(new Error('a forgotten promise'));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  expect(code).toBe(1);
  expect(output).toMatch(/unhandled rejection: exiting/);
  expect(output).toMatch(/a forgotten promise/);
});
