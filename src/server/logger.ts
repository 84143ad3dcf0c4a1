// In charge of the process logger: structured JSON (pino), with secrets redacted by path so a
// stray header or config object can never write a key into the logs.
import { pino, type Logger } from 'pino';

export type { Logger };

const REDACT = [
  'req.headers.authorization',
  'req.headers.apikey',
  'req.headers.cookie',
  'headers.authorization',
  'headers.apikey',
  '*.password',
  '*.refresh_token',
  '*.access_token',
  '*.jwtSecret',
  '*.jwtKeys',
  '*.serviceRoleKey',
  '*.cronSecret',
  '*.paymentWebhookSecret',
  '*.stripeSecretKey',
];

export function createLogger(level = 'info'): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'tenantry' } });
}
