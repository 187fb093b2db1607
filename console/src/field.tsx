import type { InputHTMLAttributes } from 'preact';
import { FieldError, fieldMessage } from './forms';

/**
 * What a field names in aria-describedby: the id of its FieldError while the API has something to say
 * about it (an id that names nothing would be an accessibility error of its own).
 */
export function describedBy(error: unknown, param: string, id: string): string | undefined {
  return fieldMessage(error, param) ? id : undefined;
}

/**
 * A labelled input of a form, with the API's message about its field (`param`, a dotted path such as
 * `signup.termsUrl`) beside it and named by its aria-describedby; the other attributes are the input's.
 */
export function Field({
  id,
  label,
  param,
  error,
  onValue,
  ...input
}: { id: string; label: string; param: string; error: unknown; onValue: (value: string) => void } & Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'id' | 'label' | 'onInput' | 'aria-describedby'
>) {
  const errorId = `${id}-error`;
  return (
    <>
      <label for={id}>{label}</label>
      <input
        id={id}
        {...input}
        aria-describedby={describedBy(error, param, errorId)}
        onInput={(event) => onValue((event.target as HTMLInputElement).value)}
      />
      <FieldError error={error} param={param} id={errorId} />
    </>
  );
}
