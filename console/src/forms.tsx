import { AffiliateApiError } from './client';
import { ErrorBanner } from './ui';

/** The API's problems of an error: the `errors` of a 400 that found several, or its one `param` and message. */
const problemsOf = (error: AffiliateApiError) =>
  error.errors?.length ? error.errors : [{ param: error.param ?? null, message: error.message }];

/** Whether a message naming `named` is shown beside the field of `param` (with its items in list mode). */
const about = (named: string | null | undefined, param: string, list: boolean) =>
  named === param || (list && (named?.startsWith(`${param}.`) ?? false));

/**
 * What the API said about one field of a form: the `param` of its error, or any of the `errors` of a
 * 400 that found several (docs/errors.md). Forms show it beside the field, as the API worded it. A
 * list field (`list`) edits its items in one input, so the messages about its items
 * (`allowedOrigins.1`) are about it too.
 */
export function fieldMessage(error: unknown, param: string, list = false): string | null {
  if (!(error instanceof AffiliateApiError)) return null;
  const messages = problemsOf(error)
    .filter((problem) => about(problem.param, param, list))
    .map((problem) => problem.message);
  return messages.length > 0 ? messages.join(' ') : null;
}

/** The API's message for a field, beside it; its id is what the field names in aria-describedby. */
export function FieldError({ error, param, id, list = false }: { error: unknown; param: string; id: string; list?: boolean }) {
  const message = fieldMessage(error, param, list);
  if (!message) return null;
  return (
    <p class="field-error" id={id} role="alert">
      {message}
    </p>
  );
}

/**
 * The banner of a form: the API's messages that no field of the form shows, so every message is shown
 * once, somewhere. A field shows the messages naming its `params` exactly, or, for the fields edited
 * as a list (`lists`), naming its items too (`allowedOrigins.1`), as FieldError does; any other
 * message (`tiers.0.metric` on a form whose tiers show only their threshold and rate) is left for the
 * banner, which then shows the error's whole message.
 */
export function FormError({ error, params, lists = [] }: { error: unknown; params: readonly string[]; lists?: readonly string[] }) {
  const placed = (named: string | null) =>
    named !== null && (params.some((param) => about(named, param, false)) || lists.some((param) => about(named, param, true)));
  const unplaced = !(error instanceof AffiliateApiError) || !problemsOf(error).every((problem) => placed(problem.param));
  return unplaced ? <ErrorBanner error={error} /> : null;
}
