/**
 * What the payouts and reports pages share: money as a person reads it (never added across
 * currencies), and a file the API answered (CSV) handed to the browser as a download.
 */

/** An amount in its own currency, e.g. "$1,234.50" or "€49.99"; an unknown code is shown beside the number. */
export function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-GB', { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

/**
 * Offers text the API answered (a CSV) as a file download. The text was fetched through the typed
 * client (its credential in a header, which a plain link could not send), so it becomes a Blob URL
 * clicked as a download link: a download is not a fetch, so the console's CSP (connect-src 'self')
 * does not stand in its way, and nothing leaves the page's origin.
 */
export function saveAsFile(fileName: string, content: string, type = 'text/csv'): void {
  const url = URL.createObjectURL(new Blob([content], { type: `${type};charset=utf-8` }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked a little later, not at once: the browser reads the Blob after the click returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
