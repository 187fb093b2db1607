/**
 * What a form's inputs hold (text) as the API takes it, and back: numbers and instants. A number is
 * never guessed: blank or not a number reaches the API as it is, for the API to say what it needs.
 */

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

/** A day of an <input type="date"> (YYYY-MM-DD) as the instant its UTC day starts, as the API's date-time parameters take it. */
export const startOfDay = (day: string) => `${day}T00:00:00.000Z`;

/** The UTC day of an instant, as an <input type="date"> shows it. */
export const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/** The lines of a list typed one item a line (allowed origins), blank lines left out. */
export const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/**
 * A select's options from the words of every value of a union (`Record<Schemas['TeamRole'], string>`):
 * the Record names each value of the document's type, so a value the document adds fails to compile
 * until it has its words.
 */
export const optionsOf = <Value extends string>(words: Record<Value, string>) =>
  (Object.keys(words) as Value[]).map((value) => ({ value, label: words[value] }));
