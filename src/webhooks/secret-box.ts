import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 1;

/**
 * Endpoint signing secrets at rest: AES-256-GCM under a key derived from WEBHOOKS_SECRET_KEY (or, unset, from
 * the API key pepper), stored as `version | iv | tag | ciphertext`. A row read from a backup or a leaked dump is
 * useless without the key; a tampered row fails to open instead of signing with garbage.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(keyMaterial: string) {
    this.key = createHash('sha256').update(keyMaterial, 'utf8').digest();
  }

  /** The box keyed by WEBHOOKS_SECRET_KEY when set, else by a key every replica derives from the pepper alike. */
  static from(secretKey: string | undefined, pepper: string): SecretBox {
    return new SecretBox(
      secretKey ?? createHmac('sha256', pepper).update('webhook-secret-key-v1').digest('hex'),
    );
  }

  seal(plain: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** Throws when the box was sealed under another key or altered. */
  open(sealed: Buffer): string {
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION)
      throw new Error('unreadable secret');
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([
      decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }
}
