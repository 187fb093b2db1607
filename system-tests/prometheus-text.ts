/**
 * Reads samples out of the Prometheus text format a component's /metrics answers: the sum of every
 * sample of `name` whose labels include `labels` (0 when there is none, as Prometheus treats an
 * absent counter). Enough for tests; label values here never hold escaped quotes.
 */
export function sampleOf(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) total += Number(match[3]);
  }
  return total;
}

/** Every metric family the text declares (its `# TYPE` lines). */
export function familiesOf(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((match) => match[1] as string);
}
