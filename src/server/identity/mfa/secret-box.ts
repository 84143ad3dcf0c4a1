// In charge of keeping second-factor secrets unreadable at rest: TOTP secrets are sealed with
// AES-256-GCM under a key derived from a server secret (bound to their factor's id, so a sealed
// secret cannot be moved to another factor), and recovery codes are kept only as keyed hashes.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export interface MfaKeys {
  seal: Buffer;
  recoveryCodes: Buffer;
}

const VERSION = 'v1';

export function createMfaKeys(serverSecret: string): MfaKeys {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', serverSecret, 'tenantry', info, 32));
  return { seal: derive('mfa-totp-secret-seal'), recoveryCodes: derive('mfa-recovery-code-hash') };
}

/** `v1.<iv>.<ciphertext and tag>`, base64url; the factor id is the additional authenticated data. */
export function sealSecret(keys: MfaKeys, factorId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keys.seal, iv);
  cipher.setAAD(Buffer.from(factorId, 'utf8'));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

/** The secret, or an error when the value was not sealed with this key for this factor. */
export function openSecret(keys: MfaKeys, factorId: string, sealed: string): string {
  const [version, ivText, bodyText] = sealed.split('.');
  if (version !== VERSION || !ivText || !bodyText) throw new Error('unknown sealed secret format');
  const body = Buffer.from(bodyText, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', keys.seal, Buffer.from(ivText, 'base64url'));
  decipher.setAAD(Buffer.from(factorId, 'utf8'));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString(
    'utf8',
  );
}

/** Ten codes of ten characters from an alphabet without look-alikes, shown as `xxxxx-xxxxx`. */
export function newRecoveryCodes(count = 10): string[] {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789'; // 31 symbols: about 49 bits per code
  return Array.from({ length: count }, () => {
    const bytes = randomBytes(10);
    let code = '';
    for (const byte of bytes) code += alphabet[byte % alphabet.length];
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** A typed code as stored: lower case, dashes and spaces ignored, keyed with the server secret. */
export function hashRecoveryCode(keys: MfaKeys, userId: string, code: string): Buffer {
  const normalized = code.toLowerCase().replace(/[\s-]/g, '');
  return createHmac('sha256', keys.recoveryCodes).update(`${userId}:${normalized}`, 'utf8').digest();
}
