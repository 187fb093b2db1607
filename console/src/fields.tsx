import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { fieldMessage, FieldError } from './forms';
import { Action } from './ui';

/**
 * The fields of the program's forms (affiliates, commission plans, coupons): each a label, its
 * control and, beside it, what the API said about that field (FieldError). The forms set no
 * browser validation of their own (noValidate): the API's rules and words are the ones shown.
 */

/**
 * GET answers one object for a lookup (null when GET /affiliates finds no such email) and an array
 * otherwise (the spec's shape): the pages list any of them.
 */
export const asList = <T,>(answer: T | T[] | null): T[] => (answer === null ? [] : Array.isArray(answer) ? answer : [answer]);

/** A number the person typed; blank is left out. */
export const optionalNumber = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));

/** A number the person typed; blank is null (clears the field on a PUT). */
export const numberOrNull = (text: string): number | null => (text.trim() === '' ? null : Number(text));

/**
 * A number the form must send: blank or not a number travels as JSON null (NaN serialises so), and
 * the API answers which field and what it takes, shown beside it.
 */
export const requiredNumber = (text: string): number => (text.trim() === '' ? Number.NaN : Number(text));

export const shownNumber = (value: number | null | undefined) => (value === null || value === undefined ? '' : String(value));

/** A datetime-local value (read as UTC, as the page says) as the API's ISO date-time; blank is null. */
export const instantOrNull = (local: string): string | null => (local === '' ? null : new Date(`${local}Z`).toISOString());

/** An ISO date-time as a datetime-local value in UTC. */
export const localOf = (iso: string | null | undefined) => (iso ? iso.slice(0, 16) : '');

/** The error when none of the form's fields shows it: the form's banner says it instead. */
export const unplaced = (error: unknown, params: string[]) => (params.some((param) => fieldMessage(error, param)) ? null : error);

const inputValue = (event: Event) => (event.target as HTMLInputElement).value;

type FieldProps = { id: string; label: ComponentChildren; param: string; error: unknown };

const described = (id: string, param: string, error: unknown) =>
  fieldMessage(error, param) ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};

/** A control with its label above and the API's word on its field below. */
function Labelled({ id, label, param, error, children }: FieldProps & { children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      <FieldError error={error} param={param} id={`${id}-error`} />
    </div>
  );
}

export function TextField({
  id,
  label,
  param,
  error,
  value,
  onValue,
  type = 'text',
  inputMode,
}: FieldProps & {
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'email' | 'datetime-local';
  inputMode?: 'decimal' | 'numeric';
}) {
  return (
    <Labelled id={id} label={label} param={param} error={error}>
      <input
        id={id}
        type={type}
        inputMode={inputMode}
        value={value}
        onInput={(event) => onValue(inputValue(event))}
        {...described(id, param, error)}
      />
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
}: FieldProps & { value: Value; onValue: (value: Value) => void; options: { value: Value; label: string }[] }) {
  return (
    <Labelled id={id} label={label} param={param} error={error}>
      <select
        id={id}
        value={value}
        onChange={(event) => onValue((event.target as HTMLSelectElement).value as Value)}
        {...described(id, param, error)}
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

export function CheckboxField({
  id,
  label,
  param,
  error,
  checked,
  onChecked,
}: FieldProps & { checked: boolean; onChecked: (checked: boolean) => void }) {
  return (
    <div class="field">
      <label class="inline">
        <input
          id={id}
          type="checkbox"
          checked={checked}
          onChange={(event) => onChecked((event.target as HTMLInputElement).checked)}
          {...described(id, param, error)}
        />{' '}
        {label}
      </label>
      <FieldError error={error} param={param} id={`${id}-error`} />
    </div>
  );
}

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
