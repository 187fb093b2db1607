import { PROGRAM_LIMIT_DEFAULTS, TRACKING_DEFAULTS, type ApiScope, type AttributionModel } from '@affiliate/contracts';
import { constantTimeEquals } from '@affiliate/platform';
import type { RateLimit } from '../config';
import type { ApiKeyModel } from '../admin/api-key-model';
import { findApiKeyByHash, hashApiKey, scopesOfKey } from '../admin/api-keys';
import { findLiveProgram } from '../admin/programs';
import type { ProgramDocument, ProgramRepository } from '../admin/program-model';
import { findPublishableKeyByHash, isPublishableKey, PUBLISHABLE_KEY_PREFIX, type PublishableKeyModel } from '../admin/publishable-keys';

/** A secret API key (`ak_…`) for a backend, or a publishable key (`pk_…`) for the tracking script in a browser. */
export type CredentialKind = 'secret' | 'publishable';

/** What a request needs of its program, whichever credential named it: read with the key (or for the session) so it costs no extra lookup. */
export type CallerProgram = {
  programId: string;
  apiAccess: boolean;
  rateLimit: RateLimit | null;
  /** What the browser routes need of the program. */
  allowedOrigins: string[];
  attributionWindowDays: number | null;
  attributionModel: AttributionModel;
  /** Forwarded to the webhook dispatcher, which enforces it. */
  maxWebhookEndpoints: number;
};

/** What a presented key resolves to; `unknown` covers revoked keys too, which answer the same 401. */
export type KeyVerdict =
  | { kind: 'unknown' }
  | { kind: 'program-deleted'; keyId: string; programId: string }
  | ({
      kind: 'valid';
      credential: CredentialKind;
      keyId: string;
      keyHash: string;
      /** The first characters of the key, which name it in the program's audit record. */
      keyPrefix: string;
      /** What a secret key may do; a publishable key has none (its routes are its scope). */
      scopes: ApiScope[];
    } & CallerProgram);

/** The program a team member's console session names: gone, or what a request needs of it. */
export type ProgramVerdict = { kind: 'program-deleted' } | ({ kind: 'live' } & CallerProgram);

type Entry<V = KeyVerdict> = { expiresAt: number; verdict: Promise<V> };

export type KeyDirectoryOptions = {
  programs: ProgramRepository;
  apiKeys: ApiKeyModel;
  publishableKeys: PublishableKeyModel;
  ttlMs: number;
  maxEntries?: number;
  /** How long a key that resolved valid here stays known, so a throttled address still reaches it (default an hour). */
  knownValidMs?: number;
};

const KNOWN_VALID_MS = 60 * 60 * 1000;

/**
 * Resolves API keys with a short-lived cache, so the hot path does not read the database on every
 * request while a revocation or a program change still takes effect within `ttlMs` on every
 * replica. Concurrent requests with the same key share one lookup.
 */
export class KeyDirectory {
  private readonly entries = new Map<string, Entry>();
  /** Programs of members' console sessions, by id: cached like keys, so a program change reaches sessions within `ttlMs` too. */
  private readonly programs = new Map<string, Entry<ProgramVerdict>>();
  /** Hashes of keys that resolved valid here, with when that knowledge ends; bounded like the cache. */
  private readonly knownValid = new Map<string, number>();

  constructor(private readonly options: KeyDirectoryOptions) {}

  /**
   * Whether this key resolved valid here recently. Only a hash and a map read: the failed-authentication
   * throttle lets such a key through without limit, so a client sharing an address with a guesser (a
   * NAT, an office) keeps working. It grants a lookup, never access: a revoked key still resolves unknown.
   */
  isKnownValid(presentedKey: string, keyHash = hashApiKey(presentedKey)): boolean {
    const until = this.knownValid.get(keyHash);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.knownValid.delete(keyHash);
    return false;
  }

  /** `keyHash` when the caller hashed the key already (authenticate: one hash per request, not two). */
  resolve(presentedKey: string, keyHash = hashApiKey(presentedKey)): Promise<KeyVerdict> {
    const now = Date.now();
    const cached = this.entries.get(keyHash);
    if (cached && cached.expiresAt > now) return cached.verdict;
    const verdict = this.lookUp(keyHash, isPublishableKey(presentedKey) ? 'publishable' : 'secret');
    this.remember(keyHash, { expiresAt: now + this.options.ttlMs, verdict });
    verdict.then(
      (resolved) =>
        resolved.kind === 'valid' && this.bounded(this.knownValid, keyHash, Date.now() + (this.options.knownValidMs ?? KNOWN_VALID_MS)),
      () => undefined,
    );
    // A failed lookup (database away) must not be cached: the next request tries again.
    verdict.catch(() => this.entries.delete(keyHash));
    return verdict;
  }

  /**
   * The program of a team member's console session (its session is read on every request; the program
   * is cached for `ttlMs` like a key's): the same rate limit, API access and settings its keys get.
   */
  program(programId: string): Promise<ProgramVerdict> {
    const cached = this.programs.get(programId);
    if (cached && cached.expiresAt > Date.now()) return cached.verdict;
    const verdict = findLiveProgram(this.options.programs, programId).then((program): ProgramVerdict =>
      program ? { kind: 'live', ...callerProgramOf(program) } : { kind: 'program-deleted' },
    );
    this.bounded(this.programs, programId, { expiresAt: Date.now() + this.options.ttlMs, verdict });
    verdict.catch(() => this.programs.delete(programId));
    return verdict;
  }

  /** After an admin change on this replica, nothing stale is served here even for `ttlMs`. */
  forgetAll(): void {
    this.entries.clear();
    this.programs.clear();
  }

  private remember(keyHash: string, entry: Entry): void {
    this.bounded(this.entries, keyHash, entry);
  }

  /** Bounded, so a flood of made-up keys cannot grow memory: the oldest entry goes first. */
  private bounded<V>(map: Map<string, V>, keyHash: string, value: V): void {
    map.delete(keyHash);
    map.set(keyHash, value);
    const maxEntries = this.options.maxEntries ?? 10_000;
    while (map.size > maxEntries) {
      const oldest = map.keys().next().value;
      if (oldest === undefined) break;
      map.delete(oldest);
    }
  }

  private async lookUp(keyHash: string, credential: CredentialKind): Promise<KeyVerdict> {
    const key = credential === 'publishable' ? await this.publishableKey(keyHash) : await this.secretKey(keyHash);
    if (!key || key.revokedAt || !constantTimeEquals(key.keyHash, keyHash)) return { kind: 'unknown' };
    const program = await findLiveProgram(this.options.programs, key.programId);
    if (!program) return { kind: 'program-deleted', keyId: key._id, programId: key.programId };
    return {
      kind: 'valid',
      credential,
      keyId: key._id,
      keyHash,
      keyPrefix: key.displayPrefix,
      scopes: key.scopes,
      ...callerProgramOf(program),
    };
  }

  private async secretKey(keyHash: string) {
    const key = await findApiKeyByHash(this.options.apiKeys, keyHash);
    return key && { ...key, scopes: scopesOfKey(key) };
  }

  private async publishableKey(keyHash: string) {
    const key = await findPublishableKeyByHash(this.options.publishableKeys, keyHash);
    return key && { ...key, displayPrefix: key.key.slice(0, PUBLISHABLE_KEY_PREFIX.length + 4), scopes: [] as ApiScope[] };
  }
}

function callerProgramOf(program: ProgramDocument): CallerProgram {
  return {
    programId: program._id,
    apiAccess: program.apiAccess,
    rateLimit: program.rateLimit ? { points: program.rateLimit.points, duration: program.rateLimit.duration } : null,
    allowedOrigins: program.allowedOrigins ?? TRACKING_DEFAULTS.allowedOrigins,
    attributionWindowDays: program.attributionWindowDays ?? TRACKING_DEFAULTS.attributionWindowDays,
    attributionModel: program.attributionModel ?? TRACKING_DEFAULTS.attributionModel,
    maxWebhookEndpoints: program.maxWebhookEndpoints ?? PROGRAM_LIMIT_DEFAULTS.maxWebhookEndpoints,
  };
}
