import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from '@affiliate/platform/testing';

const NGINX = '/usr/sbin/nginx';

/** Debian's nginx-light, installed when missing (CI machines are fresh); undefined when that fails. */
export function ensureNginx(log: (line: string) => void): string | undefined {
  if (existsSync(NGINX)) return NGINX;
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const run = (args: string[]) => {
    const [command, ...rest] = [...sudo, ...args];
    execFileSync(command as string, rest, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 180_000,
    });
  };
  try {
    log("nginx is missing: installing Debian's nginx-light (apt-get update, apt-get install)");
    run(['apt-get', 'update', '-qq']);
    // Another apt run (unattended upgrades, a parallel job) may hold the lock for a while.
    run(['apt-get', 'install', '-y', '-qq', '-o', 'DPkg::Lock::Timeout=120', '--no-install-recommends', 'nginx-light']);
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '')
      .trim()
      .split('\n')
      .slice(-3)
      .join(' / ');
    log(`could not install nginx-light: ${(error as Error).message.split('\n')[0]} ${stderr}`);
    return undefined;
  }
  return existsSync(NGINX) ? NGINX : undefined;
}

export type RunningNginx = { url: string; stop: () => Promise<void> };

/**
 * nginx in front of the coupon service the way the gateway is: /api/v1/<path> to /<path>, the
 * internal headers set on the way (the client's own are replaced), keep-alive connections to the
 * upstream. One worker, like the single-process gateway.
 */
export async function startNginx(binary: string, upstreamPort: number, headers: Record<string, string>): Promise<RunningNginx> {
  const prefix = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  const port = await freePort();
  const setHeaders = Object.entries(headers)
    .map(([name, value]) => `      proxy_set_header ${name} "${value}";`)
    .join('\n');
  const config = `
daemon off;
master_process on;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}/client_body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  upstream coupon { server 127.0.0.1:${upstreamPort}; keepalive 128; }
  server {
    listen 127.0.0.1:${port};
    keepalive_requests 1000000;
    location /api/v1/ {
      proxy_pass http://coupon/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "";
${setHeaders}
    }
  }
}
`;
  const file = join(prefix, 'nginx.conf');
  writeFileSync(file, config);
  const child: ChildProcess = spawn(binary, ['-c', file, '-p', prefix], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([
    waitForPort(port, true, 10_000),
    exited.then(() => {
      throw new Error(`nginx exited: ${stderr.trim()}`);
    }),
  ]);
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGQUIT');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** The version line, for the machine description. */
export function nginxVersion(binary: string): string {
  const probe = spawnSync(binary, ['-v'], { encoding: 'utf8' });
  return `${probe.stdout ?? ''}${probe.stderr ?? ''}`.trim().replace(/^nginx version: /, '');
}
