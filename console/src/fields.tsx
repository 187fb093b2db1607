import { FieldError } from './forms';
import { inputValue, ListFieldError } from './money-and-files';

type FieldProps = {
  id: string;
  label: string;
  /** The request field the API names in its messages (`urlModifier`, `destinationUrls.0.url`). */
  param: string;
  /** The failed call, whose messages about `param` are shown below the input. */
  error: unknown;
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'number' | 'date' | 'url' | 'password';
  size?: number;
  maxLength?: number;
  /** A list field (its items' messages, `allowedOrigins.1`, shown too). */
  list?: boolean;
  autocomplete?: string;
};

/**
 * A labelled input with the API's own message about its field below it, tied to it by
 * aria-describedby. No browser-side constraint (required, min, max): what is wrong is the API's to say.
 */
export function Field({ id, label, param, error, value, onValue, type = 'text', size, maxLength, list = false, autocomplete }: FieldProps) {
  const errorId = `${id}-error`;
  return (
    <div>
      <label for={id}>{label}</label>
      <input
        id={id}
        type={type}
        value={value}
        size={size}
        maxLength={maxLength}
        step={type === 'number' ? 'any' : undefined}
        autocomplete={autocomplete}
        aria-describedby={errorId}
        onInput={(event) => onValue(inputValue(event))}
      />
      {list ? <ListFieldError error={error} param={param} id={errorId} /> : <FieldError error={error} param={param} id={errorId} />}
    </div>
  );
}

/** A checkbox with its label around it. */
export function Checkbox({ label, checked, onChecked }: { label: string; checked: boolean; onChecked: (checked: boolean) => void }) {
  return (
    <label class="inline">
      <input type="checkbox" checked={checked} onChange={(event) => onChecked((event.target as HTMLInputElement).checked)} /> {label}
    </label>
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
