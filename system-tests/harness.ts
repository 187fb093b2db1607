import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAffiliateClient, type AffiliateClient } from '@affiliate/client';
import type { TeamRole } from '@affiliate/contracts';
import { contractViolations } from './contract';
import {
  freePort,
  startDisposableMongo,
  startDisposableRabbit,
  type DisposableMongo,
  type DisposableRabbit,
} from '@affiliate/platform/testing';

/**
 * The whole system as `npm start` runs it: the gateway and every service as separate Node processes
 * (the compiled dist/), against a MongoDB-compatible server and a RabbitMQ node of this test file's
 * own, so that the fault scenarios can stop them without disturbing other test files.
 */
export const ROOT = join(__dirname, '..');
/** Each component and the directory of its compiled `dist/start.js`. */
export const COMPONENTS = {
  coupon: 'services/coupon',
  affiliate: 'services/affiliate',
  referral: 'services/referral',
  sale: 'services/sale',
  'webhook-dispatcher': 'services/webhook-dispatcher',
  gateway: 'gateway',
} as const;
export type Component = keyof typeof COMPONENTS;

export const ADMIN_TOKEN = 'system-test-admin-token-0123456789';

export const INTERNAL_TOKEN = 'system-test-internal-token-0123456789';

/**
 * What every component of a system under test is told about the others (their URLs, as `url`
 * gives them) and the shared tokens and webhook settings: one table for the single-process system
 * and the replica drill.
 */
export function componentLinks(url: (name: Component) => string): NodeJS.ProcessEnv {
  return {
    INTERNAL_TOKEN,
    ADMIN_TOKEN,
    COUPON_URL: url('coupon'),
    AFFILIATE_URL: url('affiliate'),
    REFERRAL_URL: url('referral'),
    SALE_URL: url('sale'),
    WEBHOOK_DISPATCHER_URL: url('webhook-dispatcher'),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '0,300ms,500ms,1s,1s,2s,2s,3s,3s,5s,5s,5s',
  };
}

export type ApiResponse<T = any> = { status: number; headers: Headers; body: T }; // eslint-disable-line @typescript-eslint/no-explicit-any

export type Api = {
  request<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  get<T = any>(path: string): Promise<ApiResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  post<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  put<T = any>(path: string, body: unknown): Promise<ApiResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  delete<T = any>(path: string, body: unknown): Promise<ApiResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
};

/** An answer as a second validator needs it (openapi-core): what was asked, and what came back. */
export type RecordedExchange = { method: string; url: string; status: number; headers: Record<string, string>; text: string };
let recorded: RecordedExchange[] | undefined;

/** From now on, every answer this test file's clients receive is also kept, for a second validator. */
export function recordExchanges(): RecordedExchange[] {
  recorded = [];
  return recorded;
}

/**
 * The drift check: reads the answer (JSON when it parses, else its text) and fails the test that
 * got it when the published document does not describe it.
 */
async function documentedAnswer(method: string, url: string, response: Response): Promise<unknown> {
  const text = await response.text();
  recorded?.push({ method, url, status: response.status, headers: Object.fromEntries(response.headers), text });
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: kept as text, for the check and for the assertion message
  }
  const violations = contractViolations({
    method,
    path: new URL(url).pathname,
    status: response.status,
    headers: response.headers,
    body,
    text,
  });
  if (violations.length > 0) throw new Error(`The answer does not match the published OpenAPI document:\n  ${violations.join('\n  ')}`);
  return body;
}

/** fetch with the drift check, for tests that call routes directly (the sign-up page, the portal's API). */
export async function checkedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, init);
  await documentedAnswer(init.method ?? 'GET', url, response.clone());
  return response;
}

export function apiClient(baseUrl: string, token: string | undefined): Api {
  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const parsed = await documentedAnswer(method, `${baseUrl}${path}`, response);
    return { status: response.status, headers: response.headers, body: parsed as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  return {
    request,
    get: (path) => request('GET', path),
    post: (path, body, headers) => request('POST', path, body, headers),
    put: (path, body) => request('PUT', path, body),
    delete: (path, body) => request('DELETE', path, body),
  };
}

/**
 * The typed client integrators use (`@affiliate/client`), with the same drift check as apiClient:
 * its fetch holds every answer against the published document before the client sees it.
 */
export function typedClient(gatewayUrl: string, apiKey: string): AffiliateClient {
  const checkedFetch = async (input: Request): Promise<Response> => {
    const response = await fetch(input);
    await documentedAnswer(input.method, input.url, response.clone());
    return response;
  };
  return createAffiliateClient({ baseUrl: gatewayUrl, apiKey, fetch: checkedFetch as typeof fetch });
}

export type Delivery = {
  receivedAt: number;
  headers: IncomingHttpHeaders;
  rawBody: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: { id: string; event: string; createdAt: string; data: Record<string, any> };
};

/** A webhook subscriber on localhost that records what it receives; it can be told to fail. */
export class Subscriber {
  readonly deliveries: Delivery[] = [];
  failing = false;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (this.failing) {
          response.statusCode = 503;
          response.end('down for maintenance');
          return;
        }
        const rawBody = Buffer.concat(chunks).toString('utf8');
        this.deliveries.push({ receivedAt: Date.now(), headers: request.headers, rawBody, body: JSON.parse(rawBody) });
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  events(type?: string) {
    return this.deliveries.filter((delivery) => type === undefined || delivery.body.event === type);
  }

  /**
   * The objects carried by the `type` webhooks about the object `id`, oldest revision first: two
   * changes made close together may arrive in either order on an endpoint that is not PER_OBJECT, so
   * the last of these is the last revision, not the last to arrive.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  revisionsOf(type: string, id: string): Record<string, any>[] {
    return this.events(type)
      .filter((delivery) => delivery.body.data.id === id)
      .map((delivery) => delivery.body as Delivery['body'] & { revision?: number })
      .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0))
      .map((body) => body.data);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The body of a 200 answer; any other answer fails the test, naming its status and body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function okBody<T = any>(answer: Promise<ApiResponse<T>>): Promise<T> {
  const { status, body } = await answer;
  if (status !== 200) throw new Error(`expected 200, got ${status}: ${JSON.stringify(body)}`);
  return body;
}

type Running = { child: ChildProcess; exited: Promise<void> };

/** A signed-in team member (System.memberSession). */
export type MemberSession = { cookie: string; csrfToken: string; email: string; password: string; memberId: string };

export class System<Broker extends DisposableRabbit = DisposableRabbit> {
  readonly ports = {} as Record<Component, number>;
  private readonly processes = new Map<Component, Running>();
  private readonly logDir = mkdtempSync(join(tmpdir(), 'system-test-'));
  readonly dbPrefix = `system_${randomUUID().slice(0, 8)}`;
  gatewayUrl = '';
  /** Each component's metrics listener, a port of its own (METRICS_PORT), as in the manifests. */
  readonly metricsPorts = {} as Record<Component, number>;
  /** Settings of one component on top of the system's, read at its next launch. */
  readonly componentEnv: Partial<Record<Component, Record<string, string>>> = {};

  constructor(
    readonly mongo: DisposableMongo,
    readonly rabbit: Broker,
    private readonly extraEnv: Record<string, string>,
  ) {}

  /** The system on a RabbitMQ node of its own, or on the broker `startBroker` brings up (a cluster); `componentEnv` adds settings of one component only. */
  static start(extraEnv?: Record<string, string>): Promise<System>;
  static start<Broker extends DisposableRabbit>(
    extraEnv: Record<string, string>,
    startBroker: () => Promise<Broker>,
    componentEnv?: Partial<Record<Component, Record<string, string>>>,
  ): Promise<System<Broker>>;
  static async start(
    extraEnv: Record<string, string> = {},
    startBroker: () => Promise<DisposableRabbit> = startDisposableRabbit,
    componentEnv: Partial<Record<Component, Record<string, string>>> = {},
  ): Promise<System> {
    const [mongo, rabbit] = await Promise.all([startDisposableMongo(), startBroker()]);
    const system = new System(mongo, rabbit, extraEnv);
    Object.assign(system.componentEnv, componentEnv);
    for (const component of Object.keys(COMPONENTS) as Component[]) {
      system.ports[component] = await freePort();
      system.metricsPorts[component] = await freePort();
    }
    system.gatewayUrl = `http://127.0.0.1:${system.ports.gateway}`;
    try {
      await Promise.all((Object.keys(COMPONENTS) as Component[]).map((component) => system.launch(component)));
      await Promise.all((Object.keys(COMPONENTS) as Component[]).map((component) => system.waitReady(component)));
    } catch (error) {
      await system.stop(); // leave no process behind when the system cannot come up
      throw error;
    }
    return system;
  }

  private env(component: Component): NodeJS.ProcessEnv {
    const url = (name: Component) => `http://127.0.0.1:${this.ports[name]}`;
    return {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.SYSTEM_LOG_LEVEL ?? 'warn',
      PORT: String(this.ports[component]),
      // A free port of this file's (test files run side by side), so that a test can scrape it.
      METRICS_PORT: String(this.metricsPorts[component]),
      MONGO_URL: this.mongo.url,
      MONGO_DB_PREFIX: this.dbPrefix,
      AMQP_URL: this.rabbit.url,
      ...componentLinks(url),
      ...this.extraEnv,
      ...this.componentEnv[component],
    };
  }

  /** What a component's metrics listener answers now (Prometheus text). */
  async scrape(component: Component): Promise<string> {
    const response = await fetch(`http://127.0.0.1:${this.metricsPorts[component]}/metrics`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`${component} /metrics answered ${response.status}`);
    return response.text();
  }

  /** Whether the component's process is still the one launched (it has not died, e.g. out of memory). */
  isRunning(component: Component): boolean {
    const running = this.processes.get(component);
    return running !== undefined && running.child.exitCode === null && running.child.signalCode === null;
  }

  /** The process id of the component's current process: a different one after a restart. */
  pidOf(component: Component): number | undefined {
    return this.processes.get(component)?.child.pid;
  }

  async launch(component: Component): Promise<void> {
    const log = createWriteStream(join(this.logDir, `${component}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [join(ROOT, COMPONENTS[component], 'dist/start.js')], {
      env: this.env(component),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.processes.set(component, { child, exited });
  }

  async waitReady(component: Component, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${this.ports[component]}/readyz`, { signal: AbortSignal.timeout(2000) })
        .then((response) => response.ok)
        .catch(() => false);
      if (ready) return;
      if (Date.now() > deadline) throw new Error(`${component} not ready after ${timeoutMs} ms; logs in ${this.logDir}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** What a component has written to stdout and stderr so far (its pino lines), across restarts. */
  logOf(component: Component): string {
    try {
      return readFileSync(join(this.logDir, `${component}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  /** SIGKILL (a crash) or SIGTERM (a graceful stop); resolves once the process is gone. */
  async kill(component: Component, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const running = this.processes.get(component);
    if (!running) return;
    running.child.kill(signal);
    await running.exited;
    this.processes.delete(component);
  }

  async restart(component: Component): Promise<void> {
    await this.kill(component, 'SIGTERM');
    await this.launch(component);
    await this.waitReady(component);
  }

  admin(): Api {
    return apiClient(this.gatewayUrl, ADMIN_TOKEN);
  }

  /** A program with an API key, created through the admin API as an operator would. */
  async createProgram(settings: Record<string, unknown> = {}): Promise<{ programId: string; key: string; api: Api }> {
    const program = await this.admin().post('/admin/v1/programs', { name: `program ${randomUUID().slice(0, 6)}`, ...settings });
    if (program.status !== 200 && program.status !== 201)
      throw new Error(`creating a program: ${program.status} ${JSON.stringify(program.body)}`);
    const key = await this.admin().post(`/admin/v1/programs/${program.body.id}/api-keys`, {});
    if (key.status !== 200 && key.status !== 201) throw new Error(`creating a key: ${key.status} ${JSON.stringify(key.body)}`);
    return { programId: program.body.id, key: key.body.key, api: apiClient(`${this.gatewayUrl}/api/v1`, key.body.key) };
  }

  /**
   * A team member of the program with this role, signed in to the console: invited through the admin
   * route as an operator does, and accepted with a password. `cookie` is the Cookie header's
   * `name=value`; a write also sends `X-CSRF-Token: csrfToken` and `Origin: gatewayUrl`.
   */
  async memberSession(programId: string, role: TeamRole): Promise<MemberSession> {
    const email = `${role.toLowerCase()}-${randomUUID().slice(0, 8)}@example.com`;
    const invited = await okBody(this.admin().post(`/admin/v1/programs/${programId}/members`, { email, role }));
    const token = new URL(String(invited.inviteUrl).replace('#/', '')).searchParams.get('token') as string;
    const password = `pw-${randomUUID()}`;
    const accepted = await checkedFetch(`${this.gatewayUrl}/api/v1/team/invites/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, password }),
    });
    if (accepted.status !== 200) throw new Error(`accepting an invite: ${accepted.status} ${await accepted.text()}`);
    const session = (await accepted.json()) as { csrfToken: string; member: { id: string } };
    const cookie = (accepted.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    return { cookie, csrfToken: session.csrfToken, email, password, memberId: session.member.id };
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.keys()].map((component) => this.kill(component, 'SIGTERM')));
    await Promise.all([this.rabbit.destroy(), this.mongo.destroy()]);
  }
}
