import {
  PROGRAM_LIMIT_DEFAULTS,
  RISK_DEFAULTS,
  TRACKING_DEFAULTS,
  type EventData,
  type EventEnvelope,
  type Program,
} from '@affiliate/contracts';
import { createEvent } from '../events/outbox';

/**
 * The `program.updated` event the gateway publishes, carrying a whole Program: a new program's
 * defaults (the contract's tracking and limit defaults among them), with `settings` over them. The
 * services keep their copy of a program's settings from this event, so a test that needs a setting
 * announces it this way instead of through a gateway.
 */
export function programUpdatedEvent(programId: string, settings: Partial<Program> = {}): EventEnvelope<EventData<'program.updated'>> {
  const now = new Date().toISOString();
  const program: Program = {
    id: programId,
    name: 'Test program',
    urlModifier: 'ref',
    destinationUrls: [],
    requireApproval: false,
    defaultCommissionRate: 20,
    apiAccess: true,
    rateLimit: null,
    ...TRACKING_DEFAULTS,
    ...PROGRAM_LIMIT_DEFAULTS,
    ...RISK_DEFAULTS,
    createdAt: now,
    updatedAt: now,
    ...settings,
  };
  return createEvent('program.updated', programId, program as EventData<'program.updated'>);
}
