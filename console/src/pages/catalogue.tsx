import { ok, type PageProps } from '../client';
import { ErrorBanner, Json, useLoad } from '../ui';

const VERIFY_SNIPPET = `// npm install standardwebhooks
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET); // whsec_...
app.post('/hooks', express.raw({ type: 'application/json' }), (request, response) => {
  // Throws unless the signature, the timestamp (5 minutes) and the id match the raw body.
  const event = webhook.verify(request.body, request.headers);
  // De-duplicate by request.headers['webhook-id']: a retry carries the same id.
  response.sendStatus(204);
});`;

/** Every public event type: what fires it, its JSON Schema and an example payload. */
export function Catalogue({ client }: PageProps) {
  const types = useLoad(() => ok(client.GET('/api/v1/event-types')), []);
  return (
    <section>
      <h1>Event catalogue</h1>
      <h2>Verify a webhook</h2>
      <p>Every delivery is signed as Standard Webhooks specifies; any of its libraries verifies it:</p>
      <pre tabIndex={0} aria-label="Verification snippet">
        {VERIFY_SNIPPET}
      </pre>
      <ErrorBanner error={types.error} />
      <h2>{types.value ? `${types.value.length} event types` : 'Event types'}</h2>
      {(types.value ?? []).map((type) => (
        <article key={type.type} class="event-type">
          <h3>{type.type}</h3>
          <p>{type.description}</p>
          <details>
            <summary>Example payload of {type.type}</summary>
            <Json value={type.example} label={`Example payload of ${type.type}`} />
          </details>
          <details>
            <summary>JSON Schema of {type.type}</summary>
            <Json value={type.schema} label={`JSON Schema of ${type.type}`} />
          </details>
        </article>
      ))}
    </section>
  );
}
