import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { verifyWebhook } from '@affiliate/contracts';
import type { JsonClient } from './paced-load';

export type Arrival = { at: number; endpoint: string; event: string; objectId: string };

/**
 * The local subscriber: every endpoint is a path on one server, each with its own signing secret.
 * A delivery counts only when its signature verifies; arrival times are performance.now() in this
 * process, the same clock the load generators use.
 */
export class WebhookReceiver {
  private server: Server | undefined;
  private readonly secrets = new Map<string, string>();
  private listeners: Array<(arrival: Arrival) => void> = [];
  delivered = 0;
  badSignatures = 0;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const at = performance.now();
        const endpoint = (request.url ?? '').split('?')[0] ?? '';
        response.end('ok');
        const secret = this.secrets.get(endpoint);
        try {
          if (!secret) throw new Error(`no endpoint ${endpoint}`);
          const payload = verifyWebhook<{ event: string; data: { id?: string } }>(Buffer.concat(chunks), request.headers, secret);
          this.delivered++;
          const arrival = { at, endpoint, event: payload.event, objectId: String(payload.data?.id) };
          for (const listener of this.listeners) listener(arrival);
        } catch {
          this.badSignatures++;
        }
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The URL to subscribe; `secret` is set once the endpoint exists (the dispatcher issues it). */
  endpointUrl(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  setSecret(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  /** Creates a webhook endpoint for `affiliate.created` at `path` through the program's API, and keeps its secret. */
  async subscribe(api: JsonClient, path: string): Promise<void> {
    const endpoint = await api.expectOk<{ secret: string }>('POST', '/webhook-endpoints', {
      url: this.endpointUrl(path),
      eventTypes: ['affiliate.created'],
    });
    this.setSecret(path, endpoint.secret);
  }

  /** When each object first arrived at `path` (a redelivery keeps the first time); `stop` ends the recording. */
  firstArrivals(path: string): { arrivedAt: Map<string, number>; stop: () => void } {
    const arrivedAt = new Map<string, number>();
    const stop = this.onArrival((arrival) => {
      if (arrival.endpoint === path && !arrivedAt.has(arrival.objectId)) arrivedAt.set(arrival.objectId, arrival.at);
    });
    return { arrivedAt, stop };
  }

  onArrival(listener: (arrival: Arrival) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((other) => other !== listener);
    };
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
