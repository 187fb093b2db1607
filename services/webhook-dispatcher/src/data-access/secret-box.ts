import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const SEALED = 'enc:v1:';

/**
 * Webhook signing secrets at rest: AES-256-GCM under a key from the environment, each with its own
 * random 96-bit nonce, bound to the endpoint it belongs to (the additional data), so a database
 * dump alone signs nothing and a sealed secret copied onto another endpoint does not open. A value
 * without the prefix is a secret stored before encryption: read as it is, sealed on the next write.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the webhook secret encryption key must be 32 bytes');
  }

  seal(secret: string, boundTo: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce).setAAD(Buffer.from(boundTo, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${SEALED}${nonce.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${sealed.toString('base64url')}`;
  }

  open(stored: string, boundTo: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    const [nonce = '', tag = '', sealed = ''] = stored.slice(SEALED.length).split('.');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url')).setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(SEALED);
  }
}
