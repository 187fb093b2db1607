import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { CreateApiKeyBody, CreateProgramBody, InviteMemberBody } from '@affiliate/contracts';
import { AppError, badRequest, DEFAULT_PORTS, describeZodError } from '@affiliate/platform';
import { createApiKey, listApiKeys, revokeApiKey, type AdminStore } from '../admin/api-keys';
import { recordAudit } from '../admin/audit-log';
import { createProgram, getProgram, listPrograms } from '../admin/programs';
import type { TeamAccounts } from '../team/team-accounts';
import { inviteUrlOf } from '../team/team-routes';

export const ADMIN_USAGE = `Usage: npm run admin -- <command> [options]

  create-program --name <name> [--url-modifier ref] [--destination-url <url>]... [--require-approval]
                 [--commission-rate 20] [--no-api-access] [--rate-limit <points>/<seconds>]
                 Creates a program and its first API key (the key is printed once).
  create-key --program <programId> [--scopes read,write,finance,webhook_secrets]
                                        Creates another API key (printed once); every scope unless --scopes says.
  revoke-key --key <apiKeyId>           Revokes a key; it stops working within seconds.
  list-programs                         Programs, newest first, with their keys (without secrets).
  invite-member --program <programId> --email <email> --role OWNER|ADMIN|FINANCE|ANALYST [--gateway-url <url>]
                                        Invites a member of the program's team, such as its first OWNER: prints the
                                        single-use console link (72 hours) to give them; --gateway-url is the address
                                        people reach the gateway at (default http://localhost:${DEFAULT_PORTS.gateway}).
  list-members --program <programId>    The program's team members and pending invites.
`;

const CHANGING_COMMANDS = new Set(['create-program', 'create-key', 'revoke-key', 'invite-member']);

/**
 * Runs one admin command on the gateway's database and returns what to print. Commands that change
 * something are written to the admin audit record, as the admin API's are, with the host user.
 */
export async function runAdminCommand(argv: string[], store: AdminStore, team?: TeamAccounts): Promise<unknown> {
  const command = argv[0] ?? '';
  if (!CHANGING_COMMANDS.has(command)) return executeCommand(argv, store, team);
  const audit = (status: number, targetId: string | null) =>
    recordAudit(store, {
      actor: { credential: 'cli', address: null, userAgent: null, user: userInfo().username },
      action: `cli ${command}`,
      targetId,
      status,
      requestId: null,
    });
  try {
    const result = (await executeCommand(argv, store, team)) as {
      program?: { id: string };
      apiKey?: { programId: string };
      id?: string;
      programId?: string;
    };
    await audit(200, result.program?.id ?? result.apiKey?.programId ?? result.programId ?? result.id ?? null);
    return result;
  } catch (error) {
    if (!(error instanceof UsageError)) await audit(error instanceof AppError ? error.status : 500, null);
    throw error;
  }
}

async function executeCommand(argv: string[], store: AdminStore, team?: TeamAccounts): Promise<unknown> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'create-program': {
      const { values } = parse(rest, {
        name: { type: 'string' },
        'url-modifier': { type: 'string' },
        'destination-url': { type: 'string', multiple: true },
        'require-approval': { type: 'boolean' },
        'commission-rate': { type: 'string' },
        'no-api-access': { type: 'boolean' },
        'rate-limit': { type: 'string' },
      });
      const body = CreateProgramBody.safeParse({
        name: values.name,
        urlModifier: values['url-modifier'],
        destinationUrls: (values['destination-url'] as string[] | undefined)?.map((url) => ({ url })),
        requireApproval: values['require-approval'],
        defaultCommissionRate: values['commission-rate'] === undefined ? undefined : Number(values['commission-rate']),
        apiAccess: values['no-api-access'] ? false : undefined,
        rateLimit: values['rate-limit'] === undefined ? undefined : parseRateLimit(String(values['rate-limit'])),
      });
      if (!body.success) throw badRequest(describeZodError(body.error, 'body'));
      const program = await createProgram(store.programs, body.data);
      const apiKey = await createApiKey(store, program.id);
      return { program, apiKey, note: 'Store the key now: it is shown only once.' };
    }
    case 'create-key': {
      const { values } = parse(rest, { program: { type: 'string' }, scopes: { type: 'string' } });
      if (typeof values.program !== 'string') throw badRequest('--program <programId> is required');
      const body = CreateApiKeyBody.safeParse(
        typeof values.scopes === 'string' ? { scopes: values.scopes.split(',').map((scope) => scope.trim()) } : {},
      );
      if (!body.success) throw badRequest(describeZodError(body.error, 'body'));
      return { apiKey: await createApiKey(store, values.program, body.data), note: 'Store the key now: it is shown only once.' };
    }
    case 'revoke-key': {
      const { values, positionals } = parse(rest, { key: { type: 'string' } }, true);
      const id = typeof values.key === 'string' ? values.key : positionals[0];
      if (!id) throw badRequest('--key <apiKeyId> is required');
      return revokeApiKey(store, id);
    }
    case 'list-programs': {
      const { items } = await listPrograms(store.programs, { limit: 1000 });
      return Promise.all(items.map(async (program) => ({ ...program, apiKeys: await listApiKeys(store, program.id) })));
    }
    case 'invite-member': {
      const { values } = parse(rest, {
        program: { type: 'string' },
        email: { type: 'string' },
        role: { type: 'string' },
        'gateway-url': { type: 'string' },
      });
      if (typeof values.program !== 'string') throw badRequest('--program <programId> is required');
      const body = InviteMemberBody.safeParse({ email: values.email, role: values.role });
      if (!body.success) throw badRequest(describeZodError(body.error, 'body'));
      const teams = teamOf(team);
      await getProgram(store.programs, values.program);
      const gatewayUrl = String(values['gateway-url'] ?? `http://localhost:${DEFAULT_PORTS.gateway}`).replace(/\/$/, '');
      const { invite, token } = await teams.invite(values.program, body.data, { operator: true });
      return {
        programId: values.program,
        invite,
        inviteUrl: inviteUrlOf(gatewayUrl, token),
        note: 'Give this link to the person: it works once, for 72 hours, and is shown only now.',
      };
    }
    case 'list-members': {
      const { values } = parse(rest, { program: { type: 'string' } });
      if (typeof values.program !== 'string') throw badRequest('--program <programId> is required');
      await getProgram(store.programs, values.program);
      return teamOf(team).list(values.program);
    }
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given');
  }
}

export class UsageError extends Error {}

function teamOf(team: TeamAccounts | undefined): TeamAccounts {
  if (!team) throw new Error('The team commands need the team accounts of the gateway database');
  return team;
}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

function parse(args: string[], options: OptionSpec, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function parseRateLimit(text: string): { points: number; duration: number } | string {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  // An unparsable value goes to the schema as is, which then names the field in its message.
  return match ? { points: Number(match[1]), duration: Number(match[2]) } : text;
}

export function describeFailure(error: unknown): string {
  if (error instanceof UsageError) return `${error.message}\n\n${ADMIN_USAGE}`;
  if (error instanceof AppError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
