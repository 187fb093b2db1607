import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { CheckboxField, Field, fieldsOf, SelectField } from '../fields';
import { FieldError, FormError } from '../forms';
import { ATTRIBUTION_MODELS } from '../program-settings';
import { ErrorBanner, Notice, useLoad, useSubmit } from '../ui';
import { lines, numberOrNull, requiredNumber } from '../values';

type Program = Schemas['Program'];
type Settings = Schemas['ProgramSettingsBody'];
type AttributionModel = Program['attributionModel'];

/** A destination as the form edits it: its query parameters as one line, `utm_source=affiliate&utm_medium=link`. */
type EditedDestination = { url: string; params: string };

/**
 * The fields of PUT /program this page edits: an API message about any of them is shown beside it, the
 * rest in the banner (FormError); LISTS are edited in one control each, so their items' messages show there too.
 */
const FIELDS = [
  'name',
  'urlModifier',
  'destinationUrls',
  'requireApproval',
  'defaultCommissionRate',
  'reportingCurrency',
  'attributionWindowDays',
  'attributionModel',
  'clickDedupSeconds',
  'slug',
  'affiliatesMayAddLinks',
] as const;
const LISTS = ['allowedOrigins', 'signup'] as const;

/**
 * The program's settings (GET/PUT /program, as far as ProgramSettingsBody offers them: name, links,
 * approval, commission default, attribution, sign-up and affiliate portal) and its Stripe integration
 * (GET/PUT /integrations/stripe). Each field shows the API's own message beside it.
 */
export function Settings({ client, can }: PageProps) {
  const program = useLoad(() => ok(client.GET('/api/v1/program')), []);
  const stripe = useLoad(() => ok(client.GET('/api/v1/integrations/stripe')), []);
  return (
    <section>
      <h1>Program settings</h1>
      <ErrorBanner error={program.error} />
      {program.value ? <ProgramSettings client={client} can={can} program={program.value} onSaved={program.reload} /> : null}
      <StripeSettings client={client} can={can} integration={stripe.value} error={stripe.error} onSaved={stripe.reload} />
    </section>
  );
}

function ProgramSettings({ client, can, program, onSaved }: PageProps & { program: Program; onSaved: () => void }) {
  const [name, setName] = useState(program.name);
  const [urlModifier, setUrlModifier] = useState(program.urlModifier);
  const [destinations, setDestinations] = useState<EditedDestination[]>(
    program.destinationUrls.map((destination) => ({ url: destination.url, params: new URLSearchParams(destination.params).toString() })),
  );
  const [requireApproval, setRequireApproval] = useState(program.requireApproval);
  const [defaultRate, setDefaultRate] = useState(String(program.defaultCommissionRate));
  const [reportingCurrency, setReportingCurrency] = useState(program.reportingCurrency);
  const [origins, setOrigins] = useState(program.allowedOrigins.join('\n'));
  const [windowDays, setWindowDays] = useState(program.attributionWindowDays === null ? '' : String(program.attributionWindowDays));
  const [model, setModel] = useState<AttributionModel>(program.attributionModel);
  const [dedup, setDedup] = useState(String(program.clickDedupSeconds));
  const [slug, setSlug] = useState(program.slug ?? '');
  const [signupOpen, setSignupOpen] = useState(program.signup?.enabled ?? false);
  const [mayAddLinks, setMayAddLinks] = useState(program.affiliatesMayAddLinks ?? false);
  const { error, done, submit } = useSubmit(async () => {
    const body: Settings = {
      name,
      urlModifier,
      destinationUrls: destinations
        .filter((destination) => destination.url.trim() !== '')
        .map((destination) => ({ url: destination.url.trim(), params: Object.fromEntries(new URLSearchParams(destination.params)) })),
      requireApproval,
      // Left empty, a number goes as null for the API to refuse with its own message (never silently 0).
      defaultCommissionRate: requiredNumber(defaultRate),
      reportingCurrency: reportingCurrency.trim().toUpperCase(),
      allowedOrigins: lines(origins),
      attributionWindowDays: numberOrNull(windowDays),
      attributionModel: model,
      clickDedupSeconds: requiredNumber(dedup),
      slug: slug.trim() === '' ? null : slug.trim(),
      // The rest of the sign-up page (intro, terms, questions) is kept as it is: the Sign-up page edits it.
      ...(program.signup || signupOpen
        ? { signup: { ...(program.signup ?? { introText: '', termsUrl: null, questions: [] }), enabled: signupOpen } }
        : {}),
      affiliatesMayAddLinks: mayAddLinks,
    };
    await ok(client.PUT('/api/v1/program', { body }));
    onSaved();
  });
  const field = fieldsOf(error);
  const editable = can('updateOwnProgram');
  const editDestination = (index: number, change: Partial<EditedDestination>) =>
    setDestinations(destinations.map((destination, at) => (at === index ? { ...destination, ...change } : destination)));
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="program-settings-title">
      <h2 id="program-settings-title">Program</h2>
      <fieldset disabled={!editable}>
        <legend>General</legend>
        <Field id="program-name" label="Name" {...field('name', name, setName)} />
        <Field
          id="default-commission-rate"
          label="Default commission rate, % (when neither the affiliate nor the program has a plan)"
          type="number"
          {...field('defaultCommissionRate', defaultRate, setDefaultRate)}
        />
        <Field
          id="reporting-currency"
          label="Reporting currency (ISO code of the single-number totals)"
          size={5}
          {...field('reportingCurrency', reportingCurrency, setReportingCurrency)}
        />
      </fieldset>
      <fieldset disabled={!editable}>
        <legend>Referral links</legend>
        <Field
          id="url-modifier"
          label="Query parameter carrying the affiliate's slug (e.g. ref: https://shop.example.com/?ref=ada)"
          {...field('urlModifier', urlModifier, setUrlModifier)}
        />
        {destinations.map((destination, index) => (
          <div key={index}>
            <Field
              id={`destination-${index}-url`}
              label={`Destination ${index + 1}: URL`}
              type="url"
              size={50}
              {...field(`destinationUrls.${index}.url`, destination.url, (url) => editDestination(index, { url }))}
            />
            <Field
              id={`destination-${index}-params`}
              label={`Destination ${index + 1}: query parameters added (e.g. utm_source=affiliate)`}
              list
              size={50}
              {...field(`destinationUrls.${index}.params`, destination.params, (params) => editDestination(index, { params }))}
            />
            <button type="button" class="danger" onClick={() => setDestinations(destinations.filter((_, at) => at !== index))}>
              Remove destination {index + 1}
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setDestinations([...destinations, { url: '', params: '' }])}>
          Add a destination
        </button>
        <FieldError error={error} param="destinationUrls" id="destination-urls-error" />
      </fieldset>
      <fieldset disabled={!editable}>
        <legend>Approval, sign-up and portal</legend>
        <CheckboxField
          id="require-approval-setting"
          label="New affiliates wait for approval"
          param="requireApproval"
          error={error}
          checked={requireApproval}
          onChecked={setRequireApproval}
        />
        <Field id="signup-address" label="Sign-up page address (/join/…; empty: none)" {...field('slug', slug, setSlug)} />
        <CheckboxField
          id="signup-open"
          label="Sign-up page open for applications"
          param="signup"
          error={error}
          list
          checked={signupOpen}
          onChecked={setSignupOpen}
        />
        <CheckboxField
          id="affiliates-may-add-links"
          label="Affiliates may add referral links in their portal"
          param="affiliatesMayAddLinks"
          error={error}
          checked={mayAddLinks}
          onChecked={setMayAddLinks}
        />
      </fieldset>
      <fieldset disabled={!editable}>
        <legend>Attribution</legend>
        <Field
          rows={3}
          id="allowed-origins-setting"
          label="Origins allowed to use the publishable keys (one per line, e.g. https://shop.example.com)"
          list
          {...field('allowedOrigins', origins, setOrigins)}
        />
        <Field
          id="attribution-window-setting"
          label="Attribution window in days (empty: clicks never expire)"
          type="number"
          {...field('attributionWindowDays', windowDays, setWindowDays)}
        />
        <SelectField
          id="attribution-model-setting"
          label="Attribution model"
          param="attributionModel"
          error={error}
          value={model}
          onValue={setModel}
          options={ATTRIBUTION_MODELS}
        />
        <Field
          id="click-dedup-setting"
          label="Repeat clicks of one visitor count once within (seconds; 0: off)"
          type="number"
          {...field('clickDedupSeconds', dedup, setDedup)}
        />
      </fieldset>
      {editable ? <button type="submit">Save settings</button> : null}
      {done ? <Notice>Settings saved.</Notice> : null}
      <FormError
        error={error}
        params={[...FIELDS, ...destinations.map((_, index) => `destinationUrls.${index}.url`)]}
        lists={[...LISTS, ...destinations.map((_, index) => `destinationUrls.${index}.params`)]}
      />
    </form>
  );
}

/** The Stripe integration: the console's one form for it (the Tracking page links here). */
function StripeSettings({
  client,
  can,
  integration,
  error,
  onSaved,
}: PageProps & { integration: Schemas['StripeIntegration'] | undefined; error: unknown; onSaved: () => void }) {
  const [secret, setSecret] = useState('');
  const saving = useSubmit(async () => {
    await ok(client.PUT('/api/v1/integrations/stripe', { body: { webhookSecret: secret } }));
    setSecret('');
    onSaved();
  });
  const field = fieldsOf(saving.error);
  return (
    <form class="panel" onSubmit={saving.submit} aria-labelledby="stripe-settings-title">
      <h2 id="stripe-settings-title">Stripe integration</h2>
      <ErrorBanner error={error} />
      {integration ? (
        <>
          <p>
            In Stripe, add a webhook endpoint with this URL and the events checkout.session.completed, invoice.paid, charge.refunded and
            charge.dispute.created:
          </p>
          <pre tabIndex={0} aria-label="The Stripe webhook URL">
            {new URL(integration.webhookUrl, window.location.origin).toString()}
          </pre>
          <p>{integration.configured ? `Signing secret set (ends in ${integration.webhookSecretLast4}).` : 'No signing secret yet.'}</p>
        </>
      ) : null}
      {can('configureStripeIntegration') ? (
        <>
          <Field
            id="stripe-signing-secret"
            label="Stripe webhook signing secret (whsec_…; stored, never shown again)"
            type="password"
            autocomplete="off"
            {...field('webhookSecret', secret, setSecret)}
          />
          <button type="submit">Save the signing secret</button>
          {saving.done ? <Notice>Signing secret saved.</Notice> : null}
          <FormError error={saving.error} params={['webhookSecret']} />
        </>
      ) : null}
    </form>
  );
}
