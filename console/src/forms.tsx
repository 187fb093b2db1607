import { AffiliateApiError } from './client';

/** The API's problems of an error: the `errors` of a 400 that found several, or its one `param` and message. */
const problemsOf = (error: AffiliateApiError) =>
  error.errors?.length ? error.errors : [{ param: error.param ?? null, message: error.message }];

/**
 * What the API said about one field of a form: the `param` of its error, or any of the `errors` of a
 * 400 that found several (docs/errors.md). Forms show it beside the field, as the API worded it. A
 * list field (`list`) edits its items in one input, so the messages about its items
 * (`allowedOrigins.1`) are about it too.
 */
export function fieldMessage(error: unknown, param: string, list = false): string | null {
  if (!(error instanceof AffiliateApiError)) return null;
  const about = (named: string | null | undefined) => named === param || (list && (named?.startsWith(`${param}.`) ?? false));
  const messages = problemsOf(error)
    .filter((problem) => about(problem.param))
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
 * The error for the form's banner: none when every message of the API is about a field the form shows
 * (`params`, each with its items), which says it beside that field instead.
 */
export function unplaced(error: unknown, params: readonly string[]): unknown {
  if (!(error instanceof AffiliateApiError)) return error;
  const shown = (named: string | null) => named !== null && params.some((param) => named === param || named.startsWith(`${param}.`));
  return problemsOf(error).every((problem) => shown(problem.param)) ? null : error;
}
