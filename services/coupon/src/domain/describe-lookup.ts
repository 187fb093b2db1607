/** `id "…" and code "…"`: names what was looked for in a 404 message. */
export function describeLookup(lookup: Record<string, string | undefined>): string {
  return Object.entries(lookup)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key} "${value}"`)
    .join(' and ');
}
