/**
 * An id derived from content, in a UUID's version-5 layout (version and variant bits set), so that
 * the same content always gives the same id and a derived id reads like every other id: the unique
 * key of "one per pair" documents (a delivery per event and endpoint, a code per coupon and affiliate).
 * The digest is the caller's: the layout never changes an id a store already holds.
 */
export function uuidFromDigest(digest: Buffer): string {
  const bytes = Buffer.from(digest.subarray(0, 16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
