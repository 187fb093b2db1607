import { AffiliateApiError } from './client';

/**
 * What the API said about one field of a form: the `param` of its error, or any of the `errors` of a
 * 400 that found several (docs/errors.md). Forms show it beside the field, as the API worded it.
 */
export function fieldMessage(error: unknown, param: string): string | null {
  if (!(error instanceof AffiliateApiError)) return null;
  const problem = error.errors?.find((each) => each.param === param);
  if (problem) return problem.message;
  return error.param === param ? error.message : null;
}

/** The API's message for a field, beside it; its id is what the field names in aria-describedby. */
export function FieldError({ error, param, id }: { error: unknown; param: string; id: string }) {
  const message = fieldMessage(error, param);
  if (!message) return null;
  return (
    <p class="field-error" id={id} role="alert">
      {message}
    </p>
  );
}
