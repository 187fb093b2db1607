import { DateTime, DeletedEventData, ProgramEventData, Uuid, type EventEnvelope } from '@affiliate/contracts';
import { processedEvents, type ServiceContext } from '@affiliate/platform';
import { z, type ZodTypeAny } from 'zod';
import type { Repositories } from '../../data-access/repositories';
import { countSaleAndReviewTier, uncountSaleAndReviewTier } from '../../domain/commission-tiers';
import { countReferral, uncount } from '../../domain/link-stats';
import { forgetProgram, recordProgramSettings } from '../../domain/program-settings';

/** Only the fields the statistics need; the rest of the referral or sale is not ours to check. */
const AttributedObject = z.object({ id: Uuid, affiliateId: Uuid, linkId: Uuid.nullable().optional(), updatedAt: DateTime.optional() });
const SaleAmount = AttributedObject.extend({ totalEarned: z.number().finite(), currency: z.string().optional() });

/**
 * Every event this service consumes. Both consumers are idempotent twice over: the bus skips an
 * event id it has handled, and the writes themselves are keyed by the object's id.
 */
export function subscriptions(context: ServiceContext, repositories: Repositories): () => Promise<void> {
  const { bus, connection, logger } = context;

  /** A payload that does not fit is logged and dropped: retrying it can never succeed. */
  const handle =
    <Schema extends ZodTypeAny>(schema: Schema, apply: (event: EventEnvelope, data: z.infer<Schema>) => Promise<void>) =>
    async (event: EventEnvelope) => {
      const parsed = schema.safeParse(event.data);
      if (!parsed.success) {
        logger.warn({ eventId: event.id, type: event.type, issues: parsed.error.issues }, 'event payload does not fit; ignored');
        return;
      }
      await apply(event, parsed.data);
    };

  const programHandlers: Record<string, (event: EventEnvelope) => Promise<void>> = {
    'program.created': handle(ProgramEventData, (_event, program) => recordProgramSettings(repositories, program)),
    'program.updated': handle(ProgramEventData, (_event, program) => recordProgramSettings(repositories, program)),
    'program.deleted': handle(DeletedEventData, (event) => forgetProgram(repositories, event.programId)),
  };

  const statsHandlers: Record<string, (event: EventEnvelope) => Promise<void>> = {
    'referral.created': handle(AttributedObject, (event, referral) => countReferral(repositories, event.programId, referral)),
    'referral.deleted': handle(DeletedEventData, (event, { id }) => uncount(repositories, event.programId, 'referral', id)),
    'sale.created': handle(SaleAmount, (event, sale) => countSaleAndReviewTier(repositories, event.programId, sale)),
    'sale.updated': handle(SaleAmount, (event, sale) => countSaleAndReviewTier(repositories, event.programId, sale)),
    'sale.deleted': handle(DeletedEventData, (event, { id }) => uncountSaleAndReviewTier(repositories, event.programId, id)),
  };

  const dispatch = (handlers: Record<string, (event: EventEnvelope) => Promise<void>>) => async (event: EventEnvelope) => {
    await handlers[event.type]?.(event);
  };

  return async () => {
    await bus.subscribe({
      queue: 'affiliate.programs',
      eventTypes: Object.keys(programHandlers),
      handler: dispatch(programHandlers),
      processedEvents: processedEvents(connection, 'affiliate.programs'),
    });
    await bus.subscribe({
      queue: 'affiliate.link-stats',
      eventTypes: Object.keys(statsHandlers),
      handler: dispatch(statsHandlers),
      processedEvents: processedEvents(connection, 'affiliate.link-stats'),
    });
  };
}
