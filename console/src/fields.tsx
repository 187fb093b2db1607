import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useState } from 'preact/hooks';
import { FieldError, fieldMessage } from './forms';
import { Action } from './ui';

/**
 * The console's one idiom for a form's fields: a label, its control and, beside it, what the API said
 * about that field (FieldError), the control naming that message in aria-describedby and marked
 * aria-invalid only while the API names the field (an id that names nothing would be an accessibility
 * error of its own). No browser-side constraint (required, min, max) unless a page asks for one: what
 * is wrong is the API's to say, in its words.
 */

type Named = {
  id: string;
  label: ComponentChildren;
  /** The request field the API names in its messages (`urlModifier`, `signup.termsUrl`, `destinationUrls.0.url`). */
  param: string;
  /** The failed call, whose messages about `param` are shown beside the control. */
  error: unknown;
  /** A list edited in one control (one origin a line): the messages about its items (`allowedOrigins.1`) are shown too. */
  list?: boolean;
};

/** The attributes that tie a control to the API's message about its field, while there is one. */
export function described(error: unknown, param: string, id: string, list = false): { 'aria-invalid'?: true; 'aria-describedby'?: string } {
  return fieldMessage(error, param, list) ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};
}

/** The value of the input an event came from. */
export const inputValue = (event: Event) => (event.target as HTMLInputElement).value;

/** A control with its label above and the API's word on its field below. */
function Labelled({ id, label, param, error, list, children }: Named & { children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      <FieldError error={error} param={param} id={`${id}-error`} list={list} />
    </div>
  );
}

type InputAttributes = Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'id' | 'label' | 'value' | 'onInput' | 'type' | 'list' | 'aria-describedby' | 'aria-invalid'
>;

/**
 * A text, number, date, email, URL or password input; with `rows`, several lines of text (a list of one
 * item a line, or prose).
 */
export function Field({
  id,
  label,
  param,
  error,
  list = false,
  value,
  onValue,
  type = 'text',
  rows,
  ...input
}: Named & {
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'number' | 'date' | 'datetime-local' | 'email' | 'url' | 'password';
  rows?: number;
} & InputAttributes) {
  const tie = described(error, param, id, list);
  return (
    <Labelled id={id} label={label} param={param} error={error} list={list}>
      {rows ? (
        <textarea
          id={id}
          rows={rows}
          cols={60}
          value={value}
          disabled={input.disabled}
          onInput={(event) => onValue((event.target as HTMLTextAreaElement).value)}
          {...tie}
        />
      ) : (
        <input
          id={id}
          type={type}
          step={type === 'number' ? 'any' : undefined}
          {...input}
          value={value}
          onInput={(event) => onValue(inputValue(event))}
          {...tie}
        />
      )}
    </Labelled>
  );
}

export function SelectField<Value extends string>({
  id,
  label,
  param,
  error,
  value,
  onValue,
  options,
  disabled,
}: Named & { value: Value; onValue: (value: Value) => void; options: { value: Value; label: string }[]; disabled?: boolean }) {
  return (
    <Labelled id={id} label={label} param={param} error={error}>
      <select
        id={id}
        value={value}
        disabled={disabled}
        onChange={(event) => onValue((event.target as HTMLSelectElement).value as Value)}
        {...described(error, param, id)}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </Labelled>
  );
}

/** A checkbox with its label around it, and the API's word on its field below. */
export function CheckboxField({
  id,
  label,
  param,
  error,
  list = false,
  checked,
  onChecked,
  disabled,
}: Named & { checked: boolean; onChecked: (checked: boolean) => void; disabled?: boolean }) {
  return (
    <div class="field">
      <label class="check">
        <input
          id={id}
          type="checkbox"
          checked={checked}
          disabled={disabled}
          onChange={(event) => onChecked((event.target as HTMLInputElement).checked)}
          {...described(error, param, id, list)}
        />{' '}
        {label}
      </label>
      <FieldError error={error} param={param} id={`${id}-error`} list={list} />
    </div>
  );
}

/**
 * A list's filter (not a field of a request body, so no API message beside it): a label and a select
 * whose first choice, "any" (''), filters nothing; a change starts the list again (`onValue`).
 */
export function FilterSelect<Value extends string>({
  id,
  label,
  value,
  onValue,
  options,
}: {
  id: string;
  label: string;
  value: Value | '';
  onValue: (value: Value | '') => void;
  options: readonly Value[];
}) {
  return (
    <>
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onValue((event.target as HTMLSelectElement).value as Value | '')}>
        <option value="">any</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </>
  );
}

/**
 * What a form's fields take from it: `const field = fieldsOf(error)`, then
 * `<Field id="program-name" label="Name" {...field('name', name, setName)} />`.
 */
export const fieldsOf = (error: unknown) => (param: string, value: string, onValue: (value: string) => void) => ({
  param,
  error,
  value,
  onValue,
});

/**
 * An irreversible action (a delete): the first click asks, the second does it; a refusal is shown
 * beside it in the API's words (Action).
 */
export function ConfirmedAction({ label, confirm, run }: { label: string; confirm: string; run: () => Promise<unknown> }) {
  const [asked, setAsked] = useState(false);
  return asked ? (
    <Action kind="danger" label={confirm} run={run} />
  ) : (
    <button type="button" class="danger" onClick={() => setAsked(true)}>
      {label}
    </button>
  );
}
