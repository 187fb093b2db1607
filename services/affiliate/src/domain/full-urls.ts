import type { ProgramSettings } from '../data-access/programs';

/**
 * One URL per destination of the program: its own query kept, the slug under the program's URL
 * modifier, then the destination's custom parameters. URLSearchParams does the encoding.
 */
export function fullUrlsOf(settings: ProgramSettings, slug: string): { baseUrl: string; fullUrl: string }[] {
  return settings.destinationUrls.map((destination) => {
    const url = new URL(destination.url);
    url.searchParams.set(settings.urlModifier, slug);
    for (const [name, value] of Object.entries(destination.params ?? {})) url.searchParams.append(name, value);
    return { baseUrl: destination.url, fullUrl: url.toString() };
  });
}
