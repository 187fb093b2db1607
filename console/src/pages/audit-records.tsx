import { useState } from 'preact/hooks';
import { type PageProps, type Schemas } from '../client';
import { paged } from '../paging';
import { ErrorBanner, Notice, Pager, Table, useLoad, when } from '../ui';

type Actor = Schemas['ProgramAuditRecord']['actor'];

/**
 * Who acted, as a person reads it: a team member by email (and id, which stays the same if the email
 * changes), an API key by the prefix shown in the key lists, an affiliate's portal session by its id.
 */
function whoOf(actor: Actor): string {
  const portal = actor.affiliatePortalSessionId
    ? ` in portal session ${actor.affiliatePortalSessionId} of affiliate ${actor.affiliateId ?? '—'}`
    : '';
  if (actor.memberId) return `${actor.email ?? '—'} (${actor.memberId})${portal}`;
  if (actor.apiKeyPrefix) return `API key ${actor.apiKeyPrefix}…${portal}`;
  return portal.trim() || '—';
}

/**
 * The program's audit record (GET /api/v1/audit-records), newest first: every change a team member
 * made or tried in the console, refusals included, under that member; and the sensitive acts of the
 * program's API keys and affiliate portal sessions. Read-only for every role that may read it.
 */
export function AuditRecords({ client, can }: PageProps) {
  const [cursor, setCursor] = useState<string | null>(null);
  const records = useLoad(async () => {
    const query = { limit: 50, ...(cursor ? { startingAfter: cursor } : {}) };
    const { data, next } = await paged(client.GET('/api/v1/audit-records', { params: { query } }));
    return { items: data, next };
  }, [cursor]);
  return (
    <section>
      <h1>Audit record</h1>
      {can('getAuditRecords') ? null : <Notice>Your role cannot read the audit record.</Notice>}
      <ErrorBanner error={records.error} />
      <Table
        caption="Changes made or tried in the console, and sensitive acts of API keys and portal sessions, newest first"
        rows={records.value?.items ?? []}
        empty="Nothing recorded yet."
        columns={[
          { title: 'When', value: (record) => when(record.at) },
          { title: 'Who', value: (record) => whoOf(record.actor) },
          { title: 'Action', value: (record) => record.action },
          { title: 'Operation', value: (record) => record.operation },
          { title: 'Status', value: (record) => `${record.status}${record.aborted ? ' (client left before the answer)' : ''}` },
        ]}
      />
      <Pager cursor={cursor} next={records.value?.next} onPage={setCursor} />
    </section>
  );
}
