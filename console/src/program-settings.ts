import { ok, type ApiClient, type Schemas } from './client';
import { useSubmit } from './ui';

/**
 * A settings form of the program (PUT /api/v1/program): submitting sends what `body` gives, then says
 * Saved, or keeps the API's error for the form to show (beside its fields with FieldError).
 */
export function useProgramSettings(client: ApiClient, onSaved: () => void, body: () => Schemas['ProgramSettingsBody']) {
  const { error, done, submit } = useSubmit(async () => {
    await ok(client.PUT('/api/v1/program', { body: body() }));
    onSaved();
  });
  return { error, saved: done, save: submit };
}

/** The attribution models a program chooses from (the Tracking and Program settings pages). */
export const ATTRIBUTION_MODELS: { value: Schemas['Program']['attributionModel']; label: string }[] = [
  { value: 'FIRST_CLICK', label: 'First click' },
  { value: 'LAST_CLICK', label: 'Last click' },
];
