import { fieldMessage } from './forms';

/**
 * What a field names in aria-describedby: the id of its FieldError while the API has something to say
 * about it (an id that names nothing would be an accessibility error of its own).
 */
export function describedBy(error: unknown, param: string, id: string): string | undefined {
  return fieldMessage(error, param) ? id : undefined;
}
