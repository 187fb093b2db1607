import { AffiliateApiError } from './client';

/**
 * What the payouts, reports and settings pages share: money as a person reads it (never added across
 * currencies), a file the API answered (CSV) handed to the browser as a download, and the split of an
 * API error between the fields of a form and the banner above it.
 */

/** An amount in its own currency, e.g. "$1,234.50" or "€49.99"; an unknown code is shown beside the number. */
export function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-GB', { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

/**
 * Offers text the API answered (a CSV) as a file download. The text was fetched through the typed
 * client (its credential in a header, which a plain link could not send), so it becomes a Blob URL
 * clicked as a download link: a download is not a fetch, so the console's CSP (connect-src 'self')
 * does not stand in its way, and nothing leaves the page's origin.
 */
export function saveAsFile(fileName: string, content: string, type = 'text/csv'): void {
  const url = URL.createObjectURL(new Blob([content], { type: `${type};charset=utf-8` }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked a little later, not at once: the browser reads the Blob after the click returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Whether an API problem's `param` is the field or one of its items (`allowedOrigins.1` is about `allowedOrigins`). */
const isAbout = (param: string | null | undefined, field: string) => param === field || (param?.startsWith(`${field}.`) ?? false);

/** The error to show in the banner: none when every message of the API is about a field of the form (shown beside it instead). */
export function unlessAboutAField(error: unknown, fields: readonly string[]): unknown {
  if (!(error instanceof AffiliateApiError)) return error;
  const params = error.errors?.length ? error.errors.map((each) => each.param) : [error.param];
  return params.every((param) => fields.some((field) => isAbout(param, field))) ? null : error;
}

/** A day of an <input type="date"> (YYYY-MM-DD) as the instant its UTC day starts, as the API's date-time parameters take it. */
export const startOfDay = (day: string) => `${day}T00:00:00.000Z`;

/** The UTC day of an instant, as an <input type="date"> shows it. */
export const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/** The value of the input an event came from. */
export const inputValue = (event: Event) => (event.target as HTMLInputElement).value;

/** The API's messages about a list field and its items (`allowedOrigins`, `allowedOrigins.1`, …), beside the one input that edits the list. */
export function ListFieldError({ error, param, id }: { error: unknown; param: string; id: string }) {
  if (!(error instanceof AffiliateApiError)) return null;
  const problems = error.errors?.length ? error.errors : [{ param: error.param ?? null, message: error.message }];
  const messages = problems.filter((each) => isAbout(each.param, param)).map((each) => each.message);
  if (messages.length === 0) return null;
  return (
    <p class="field-error" id={id} role="alert">
      {messages.join(' ')}
    </p>
  );
}
