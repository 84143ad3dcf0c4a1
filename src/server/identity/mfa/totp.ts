// In charge of TOTP itself (RFC 6238 through the otpauth library, with the settings every
// authenticator app assumes: SHA-1, 6 digits, 30 seconds) and the QR code of its otpauth:// URI.
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

const PERIOD = 30;

export interface NewTotp {
  secret: string;
  uri: string;
  /** an SVG document (GoTrue's qr_code; supabase-js turns it into a data: URI) */
  qrCode: string;
}

function totpFor(secret: string, issuer: string, account: string): TOTP {
  return new TOTP({
    issuer,
    label: account,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD,
    secret: Secret.fromBase32(secret),
  });
}

export async function newTotp(issuer: string, account: string): Promise<NewTotp> {
  const secret = new Secret({ size: 20 }).base32;
  const uri = totpFor(secret, issuer, account).toString();
  const qrCode = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
  return { secret, uri, qrCode };
}

/**
 * The time step a code belongs to, accepting the previous and next step for clock drift (as
 * GoTrue does), or null when it matches none. The caller refuses a step already used.
 */
export function matchingStep(secret: string, code: string, now = Date.now()): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const delta = totpFor(secret, '', '').validate({ token: code, timestamp: now, window: 1 });
  if (delta === null) return null;
  return Math.floor(now / 1000 / PERIOD) + delta;
}
