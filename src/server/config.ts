// In charge of reading the process environment once, validating it, and (in local mode only)
// generating and persisting the development secrets so a zero-configuration start just works.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { z } from 'zod';
import { plansSchema, resourceLimitsSchema, type Plan, type ResourceLimits } from './billing/plans.js';
import { DEFAULT_APP_MIGRATIONS_DIR } from './db/migration-files.js';
import { loadAuthMailTemplates, type AuthMailTemplates } from './identity/mail-templates.js';
import { parseOAuthProviders, type OAuthProvider } from './identity/oauth/providers.js';
import { parseIdTokenSettings } from './identity/oauth/id-token-providers.js';
import type { IdTokenDeps } from './identity/flows/id-token.js';
import type { SmsProviderConfig } from './identity/sms/provider.js';
import { createRedirectPolicy } from './identity/redirects.js';
import { generateDevKeys, parseKeySet, type TokenKeySet } from './identity/signing-keys.js';

/** Local mode = no DATABASE_URL: embedded Postgres and generated secrets. Production = everything explicit. */
export type Mode = 'local' | 'production';

export interface RateLimits {
  /** failed password grants for one e-mail, all addresses together, before every guess is slowed */
  signInFailuresPerEmail: number;
  /** password grants per client address per window */
  signInPerAddress: number;
  /** failed password grants for one e-mail from one address before that address must wait */
  signInFailuresPerAddress: number;
  /** the first wait in seconds; it doubles with each further failure */
  signInBackoffSeconds: number;
  /** the longest wait in seconds */
  signInBackoffMaxSeconds: number;
  /** refresh grants per session per window */
  refreshPerSession: number;
  /** refresh tokens per client address per window that had to be traced back for reuse */
  refreshTracesPerAddress: number;
  /** sign-ups per client address per window */
  signUpPerAddress: number;
  /** anonymous sign-ins per client address per hour */
  anonymousSignInsPerAddress: number;
  /** identity e-mails per hour, all addresses together, while sign-ups need confirming */
  emailSentPerHour: number;
  /** wrong e-mail codes per e-mail address per hour */
  otpFailuresPerEmail: number;
  /** failed verifications (wrong codes or links) per client address per window */
  verifyFailuresPerAddress: number;
  /** wrong TOTP codes per factor (recovery codes per user) per window */
  mfaFailuresPerFactor: number;
  /** password changes (PUT /user with a password, the web app's forms) per user per window */
  passwordChangesPerUser: number;
  windowSeconds: number;
}

/** What one identity caller may cost the process: memory per token, password hashing time. */
export interface IdentityLimits {
  /** bytes of JSON in one user's user_metadata, and in its app_metadata (copied into every token) */
  metadataMaxBytes: number;
  /** bytes the verified-token cache may hold; the oldest tokens are forgotten first */
  verifiedTokenCacheBytes: number;
  /** password hashes (argon2id, bcrypt) computed at once, whoever asks */
  passwordHashConcurrency: number;
  /** password hashes one caller (user, or address when anonymous) may have running or waiting */
  passwordHashesPerCaller: number;
  /** password hashes waiting, all callers together; more are refused until the queue drains */
  passwordHashQueue: number;
  /** seconds after a recovery link signs someone in that they may set a password without the old one */
  recoverySessionSeconds: number;
}

/** The e-mail identity lifecycle: links, codes, redirects and the e-mails themselves. */
export interface AuthEmailConfig {
  /** where links land by default and the only fallback for a refused redirect_to */
  siteUrl: string;
  /** URI_ALLOW_LIST globs: further allowed redirect_to targets */
  uriAllowList: string[];
  /** seconds a link or code works (MAILER_OTP_EXP) */
  otpExpirySeconds: number;
  /** digits of an e-mail code */
  otpLength: number;
  /** wrong tries one e-mail code survives */
  otpMaxAttempts: number;
  /** seconds between two e-mails of one kind to one address (SMTP_MAX_FREQUENCY) */
  maxFrequencySeconds: number;
  /** an e-mail change is confirmed from the current address too */
  secureEmailChange: boolean;
  /** a password change needs a recent sign-in or a reauthentication code */
  securePasswordChange: boolean;
  /** a password change names the current password (REQUIRE_CURRENT_PASSWORD) */
  requireCurrentPassword: boolean;
  /** the product's name in e-mails */
  productName: string;
  templates: AuthMailTemplates;
}

/** Phone sign-in and phone factors: the text-message provider, codes and limits (SMS_*). */
export interface AuthSmsConfig {
  /** SMS_PROVIDER: twilio, the development outbox (local mode only), or none (phone is off) */
  provider: SmsProviderConfig;
  /** phone sign-ups need no code (SMS_AUTOCONFIRM) */
  autoconfirm: boolean;
  /** seconds between two codes to one number (SMS_MAX_FREQUENCY) */
  maxFrequencySeconds: number;
  /** seconds a code works (SMS_OTP_EXP) */
  otpExpirySeconds: number;
  /** digits of a code (SMS_OTP_LENGTH) */
  otpLength: number;
  /** the message, with {{ .Code }} where the code goes (SMS_TEMPLATE) */
  template: string;
  /** fixed codes for test numbers, sent nowhere (SMS_TEST_OTP, number:code,...) */
  testOtp: Record<string, string>;
  /** messages per hour, all numbers together (RATE_LIMIT_SMS_SENT) */
  sentPerHour: number;
  /** messages per hour to one number (RATE_LIMIT_SMS_PER_NUMBER) */
  perNumberPerHour: number;
  /** messages per hour asked from one client address (RATE_LIMIT_SMS_PER_ADDRESS) */
  perAddressPerHour: number;
  /** seconds between two challenges of one phone factor (MFA_PHONE_MAX_FREQUENCY) */
  mfaPhoneMaxFrequencySeconds: number;
}

export interface Config {
  mode: Mode;
  port: number;
  host: string;
  appUrl: string;
  authUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** APP_MIGRATIONS_DIR: the team's migrations, applied after the core ones (decision 0061) */
  appMigrationsDir: string;
  jwtSecret: string;
  /** JWT_KEYS: the asymmetric (or kid-named HS256) keys; null = tokens are HS256 with JWT_SECRET */
  jwtKeys: TokenKeySet | null;
  /** HS256 tokens signed with JWT_SECRET are still accepted (the rotation window) */
  jwtSecretAccepted: boolean;
  jwtIssuer: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** seconds during which the parent of the active refresh token still gets that same child */
  refreshTokenReuseIntervalSeconds: number;
  projectApiKey: string;
  /** requests one workspace API key may make per minute (sliding window, all instances) */
  apiKeyRequestsPerMinute: number;
  serviceRoleKey: string;
  paymentWebhookSecret: string;
  cronSecret: string;
  autoconfirm: boolean;
  disableSignup: boolean;
  /** POST /signup without e-mail or phone creates an anonymous user (ENABLE_ANONYMOUS_SIGN_INS) */
  anonymousSignIns: boolean;
  minPasswordLength: number;
  trustProxy: boolean;
  rateLimits: RateLimits;
  authEmail: AuthEmailConfig;
  authSms: AuthSmsConfig;
  logLevel: string;
  /** outgoing mail; unset = messages stay in the outbox (development mailbox) */
  smtpUrl: string | undefined;
  /**
   * MAIL_DELIVERY: smtp sends the outbox; outbox leaves it for another sender, on purpose.
   * Unset in production without SMTP_URL, which start-up refuses (production-checks.ts).
   */
  mailDelivery: 'smtp' | 'outbox' | undefined;
  /** APP_URL was given: e-mail links, redirects and webhooks' return links are built on it */
  appUrlGiven: boolean;
  /** METRICS_TOKEN: GET /metrics answers a scraper that sends it as a bearer token; unset = off */
  metricsToken: string | undefined;
  mailFrom: string;
  /** run the digest crons in-process (off when an external scheduler calls the endpoint) */
  scheduler: boolean;
  schedulerTimezone: string;
  /** AUDIT_RETENTION_DAYS: days a security audit log line is kept before the nightly job removes it */
  auditRetentionDays: number;
  /** outgoing webhooks (WEBHOOKS_*): where they may go, how they are retried, when an endpoint is turned off */
  webhooks: {
    allowPrivateDestinations: boolean;
    allowedHosts: string[];
    requireHttps: boolean;
    retrySchedule: number[];
    timeoutMs: number;
    disableAfterFailedMessages: number;
    disableAfterDays: number;
    logRetentionDays: number;
  };
  /** DOMAIN_VERIFICATION_DNS_SERVER: resolvers for workspace domains' TXT records; empty = the system's */
  domainVerificationDnsServers: string[];
  /** paid plans and their Stripe prices; the free plan is built in */
  billingPlans: Plan[];
  freePlanSeats: number;
  freePlanProjects: number;
  /** FREE_PLAN_LIMITS: the free plan's limits of the team's own tables ({"tasks": 100}) */
  freePlanLimits: ResourceLimits;
  /** workspaces one user may own; creating more is refused by the database (written there at start) */
  maxWorkspacesPerUser: number;
  /** days a past-due workspace keeps full access before domain data turns read-only */
  billingGraceDays: number;
  /** billing is optional: unset = the app runs fully and says billing is not configured */
  stripeSecretKey: string | undefined;
  stripeApiBase: string | undefined;
  database: DatabaseLimits;
  http: HttpLimits;
  web: WebLimits;
  dataApi: DataApiLimits & DataApiExposure;
  /** sign-in with OAuth/OIDC providers: the enabled EXTERNAL_<PROVIDER>_* ones */
  oauthProviders: OAuthProvider[];
  /** grant_type=id_token: the issuers accepted (EXTERNAL_<PROVIDER>_*, EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS) and key fetching */
  idToken: IdTokenDeps;
  /** signed-in users may link and unlink identities (SECURITY_MANUAL_LINKING_ENABLED) */
  manualLinking: boolean;
  /** Tenantry as an OAuth 2.1 authorization server for other applications (docs/decisions/0092) */
  oauthServer: OAuthServerConfig;
  mfa: MfaConfig;
  /** passkeys and WebAuthn second factors: the relying party and limits (docs/decisions/0090) */
  webauthn: WebAuthnConfig;
  identity: IdentityLimits;
  /** the web app's files: pictures and project attachments (their buckets' limits) */
  appFiles: AppFilesConfig;
  /** APP_LIVE_TOKEN_SECONDS: the life of the access token a page is handed for realtime (decision 0082) */
  appLiveTokenSeconds: number;
  /** where stored files' bytes live (STORAGE_BACKEND and its settings) */
  storageBackend: StorageBackendConfig;
  /** the /storage/v1 API's limits */
  storage: StorageConfig;
  /** the /realtime/v1 service's limits */
  realtime: RealtimeConfig;
  /** image transformations at /storage/v1/render/image (docs/decisions/0075) */
  storageImages: StorageImagesConfig;
}

/** Image transformations' switch and bounds (docs/operations.md). */
export interface StorageImagesConfig {
  /** STORAGE_IMAGE_TRANSFORMATION: on serves /render/image; off answers it as an unknown route */
  enabled: boolean;
  /** STORAGE_IMAGE_MAX_SOURCE_BYTES: the largest stored file that is decoded */
  maxSourceBytes: number;
  /** STORAGE_IMAGE_MAX_PIXELS: the most pixels (width x height) a source may have */
  maxPixels: number;
  /** STORAGE_IMAGE_MAX_DIMENSION: asked widths and heights are clamped to 1..this */
  maxDimension: number;
  /** STORAGE_IMAGE_CONCURRENCY: transformations running at once (the rest wait their turn) */
  concurrency: number;
  /** STORAGE_IMAGE_QUEUE: transformations that may wait; more are answered 429 */
  queue: number;
  /** STORAGE_IMAGE_CACHE_BYTES: renderings kept on disk for reuse (0: none) */
  cacheBytes: number;
  /** STORAGE_IMAGE_CACHE_DIR, default DATA_DIR/image-cache */
  cacheDir: string;
}

/** The /realtime/v1 service's limits (docs/operations.md). */
export interface RealtimeConfig {
  /** REALTIME_MAX_CONNECTIONS_PER_ADDRESS: open sockets per client address (an IPv6 client by its /64) */
  maxConnectionsPerAddress: number;
  /** REALTIME_MAX_CHANNELS_PER_SOCKET: channels one socket may have joined at once */
  maxChannelsPerSocket: number;
  /** REALTIME_MAX_MESSAGES_PER_SECOND: messages one socket may send per second */
  maxMessagesPerSecond: number;
  /** REALTIME_MAX_PAYLOAD_BYTES: the largest broadcast payload or presence state */
  maxPayloadBytes: number;
  /** REALTIME_HEARTBEAT_TIMEOUT_MS: a socket silent for this long (no heartbeat) is closed */
  heartbeatTimeoutMs: number;
  /** REALTIME_CHANGES_RETENTION_MS: how long database changes are kept for subscriptions that come back */
  changesRetentionMs: number;
  /** REALTIME_MAX_RECORD_BYTES: a change's record past this keeps only its small values (error 413) */
  maxRecordBytes: number;
  /** REALTIME_CHANGES_POLL_MS: how often an instance with subscribers reads new database changes */
  changesPollMs: number;
  /** REALTIME_MESSAGES_RETENTION_MS: how long broadcasts stored by realtime.send are kept (for replay) */
  messagesRetentionMs: number;
  /** REALTIME_MAX_CONNECTIONS_PER_USER: sockets with a channel joined as one user (anonymous callers by address) */
  maxConnectionsPerUser: number;
  /** REALTIME_MAX_CONNECTIONS_PER_WORKSPACE: sockets with a channel on one workspace's topics */
  maxConnectionsPerWorkspace: number;
  /** REALTIME_MAX_JOINS_PER_SECOND_PER_USER: channel joins one user may make per second */
  maxJoinsPerSecondPerUser: number;
  /** REALTIME_MAX_JOINS_PER_SECOND_PER_WORKSPACE: channel joins on one workspace's topics per second */
  maxJoinsPerSecondPerWorkspace: number;
  /** REALTIME_MAX_MESSAGES_PER_SECOND_PER_USER: broadcasts one user may send per second, all sockets together */
  maxMessagesPerSecondPerUser: number;
  /** REALTIME_MAX_MESSAGES_PER_SECOND_PER_WORKSPACE: broadcasts sent on one workspace's topics per second */
  maxMessagesPerSecondPerWorkspace: number;
  /** REALTIME_MAX_PRESENCE_PER_SECOND_PER_USER: presence calls one user may make per second */
  maxPresencePerSecondPerUser: number;
  /** REALTIME_MAX_PRESENCE_PER_SECOND_PER_WORKSPACE: presence calls on one workspace's topics per second */
  maxPresencePerSecondPerWorkspace: number;
  /** REALTIME_PRESENCE_CALLS_PER_WINDOW: presence calls one channel may make per REALTIME_PRESENCE_WINDOW_MS */
  presenceCallsPerWindow: number;
  /** REALTIME_PRESENCE_WINDOW_MS: the window of REALTIME_PRESENCE_CALLS_PER_WINDOW */
  presenceWindowMs: number;
  /** REALTIME_MAX_PRESENCE_BYTES: the largest presence state one channel may track */
  maxPresenceBytes: number;
  /** REALTIME_KEY_CHECK_MS: how often an instance re-checks the workspace API keys of its open channels */
  keyCheckMs: number;
}

/** The /storage/v1 API's limits (docs/operations.md). */
export interface StorageConfig {
  /** STORAGE_MAX_UPLOAD_BYTES: the largest object, whatever a bucket's own limit says */
  maxUploadBytes: number;
  /** STORAGE_SIGNED_URL_MAX_SECONDS: the longest a signed download URL may live */
  signedUrlMaxSeconds: number;
  /** STORAGE_SIGNED_UPLOAD_SECONDS: how long a signed upload URL lives */
  signedUploadSeconds: number;
  /** STORAGE_BATCH_MAX: object names in one remove or batch sign */
  batchMax: number;
  /** STORAGE_UPLOAD_IDLE_TIMEOUT_MS: an accepted upload is cut when no byte arrives for this long */
  uploadIdleTimeoutMs: number;
  /** STORAGE_RESUMABLE_EXPIRY_SECONDS: how long an unfinished resumable upload is kept */
  resumableExpirySeconds: number;
  /** FREE_PLAN_STORAGE_BYTES: bytes a free workspace may keep in workspace buckets (0 = unlimited) */
  freePlanStorageBytes: number | null;
}

/** The web app's buckets' limits, kept in step at start-up (docs/operations.md, decision 0077). */
export interface AppFilesConfig {
  /** APP_PICTURE_MAX_BYTES: the largest profile picture or workspace logo */
  pictureMaxBytes: number;
  /** APP_PROJECT_FILE_MAX_BYTES: the largest file attached to a project */
  projectFileMaxBytes: number;
  /** APP_PROJECT_FILE_TYPES: the types a project file may have (`type/*` for a family); null = any */
  projectFileTypes: string[] | null;
}

/** Project attachments' types unless APP_PROJECT_FILE_TYPES says otherwise: documents, not programs. */
export const DEFAULT_PROJECT_FILE_TYPES = [
  'image/*',
  'text/*',
  'audio/*',
  'video/*',
  'application/pdf',
  'application/json',
  'application/zip',
  'application/rtf',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
];

/** Where stored files' bytes live: a folder on local disk, or a bucket of an S3-compatible service. */
export type StorageBackendConfig =
  | { kind: 'local'; /** STORAGE_LOCAL_DIR, default DATA_DIR/storage */ dir: string }
  | {
      kind: 's3';
      /** STORAGE_S3_ENDPOINT; unset = AWS itself for the region */
      endpoint: string | undefined;
      bucket: string;
      region: string;
      /** unset = the AWS SDK's default chain (environment, profile, instance role) */
      credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
      /** bucket in the path (most S3-compatible servers) rather than in the host name */
      forcePathStyle: boolean;
    };

/** TOTP second factors. */
export interface MfaConfig {
  /** the server secret TOTP secrets are sealed with (MFA_ENCRYPTION_KEY, else JWT_SECRET) */
  encryptionKey: string;
  /** seconds a challenge can be verified */
  challengeExpirySeconds: number;
  /** factors per user, verified or not */
  maxEnrolledFactors: number;
}

/** The OAuth 2.1 authorization server (GoTrue's [auth.oauth_server]). */
export interface OAuthServerConfig {
  /** the admin API for its clients is served (OAUTH_SERVER_ENABLED) */
  enabled: boolean;
  /** redirect URIs one client may register (OAUTH_SERVER_MAX_REDIRECT_URIS) */
  maxRedirectUris: number;
  /** the web app's consent page, on APP_URL (OAUTH_SERVER_AUTHORIZATION_PATH) */
  authorizationUrl: string;
}

/** Passkeys and WebAuthn factors (GoTrue's [auth.passkey] and [auth.webauthn]). */
export interface WebAuthnConfig {
  /** sign-in with passkeys and their /passkeys routes (PASSKEY_ENABLED) */
  passkeysEnabled: boolean;
  /** factor_type 'webauthn' may be enrolled, and verified (MFA_WEBAUTHN_ENROLL_ENABLED, _VERIFY_ENABLED) */
  mfaEnrollEnabled: boolean;
  mfaVerifyEnabled: boolean;
  /** the relying party id: the host of APP_URL unless WEBAUTHN_RP_ID names a registrable suffix of it */
  rpId: string;
  rpDisplayName: string;
  /** origins a ceremony may come from: APP_URL's unless WEBAUTHN_RP_ORIGINS lists them */
  rpOrigins: string[];
  /** seconds a ceremony's challenge can be answered (WEBAUTHN_CHALLENGE_EXPIRY) */
  challengeExpirySeconds: number;
  /** passkeys per user (PASSKEY_MAX_PASSKEYS_PER_USER) */
  maxPasskeysPerUser: number;
  /** passkey sign-in ceremonies started per client address per rate-limit window (RATE_LIMIT_PASSKEY) */
  ceremoniesPerAddress: number;
}

/** What the data API exposes and lets clients choose (PostgREST's db-schemas, db-tx-end, db-plan-enabled). */
export interface DataApiExposure {
  /** schemas clients may address; the first is the default, others are chosen with Accept-Profile/Content-Profile */
  schemas: string[];
  /** how transactions end, and whether Prefer: tx=commit|rollback may change it */
  txEnd: 'commit' | 'commit-allow-override' | 'rollback' | 'rollback-allow-override';
  /** Accept: application/vnd.pgrst.plan answers the statement's EXPLAIN */
  planEnabled: boolean;
}

/** Schemas the service keeps for itself, which the data API never exposes. */
const INTERNAL_SCHEMAS = ['auth', 'internal', 'pg_catalog', 'information_schema', 'pg_toast'];

/** How the service uses its PostgreSQL connections. */
export interface DatabaseLimits {
  /** connections in the pool, shared by every API and the web app */
  poolMax: number;
  /** a statement run for a caller (under row-level security) is cancelled after this long */
  statementTimeoutMs: number;
  /** a connection idle inside a transaction for this long is closed by PostgreSQL */
  idleInTransactionTimeoutMs: number;
  /**
   * DATABASE_POOLER: what sits between the pool and PostgreSQL. Behind any pooler the connection
   * carries no start-up parameter PgBouncer would refuse; in transaction mode each transaction may
   * run on another server connection, so nothing may rely on a session (decision 0054).
   */
  pooler: 'none' | 'session' | 'transaction';
  /** named prepared statements (off by default behind a transaction-mode pooler) */
  preparedStatements: boolean;
  /** a direct connection for the schema listener's LISTEN, past a transaction-mode pooler */
  listenUrl: string | undefined;
  /** behind a transaction-mode pooler without a listen URL, the catalog is checked this often */
  schemaPollIntervalMs: number;
}

/** What the one HTTP server lets clients hold: connections, and how long each may take. */
export interface HttpLimits {
  /** open connections over all clients; more are closed as they arrive */
  maxConnections: number;
  /** open connections from one address (an IPv6 /64); more are closed as they arrive */
  maxConnectionsPerAddress: number;
  /** a request's headers must have arrived this long after it began (408 otherwise) */
  headersTimeoutMs: number;
  /** a whole request, body included, must have arrived this long after it began */
  requestTimeoutMs: number;
  /** a kept-alive connection waits this long for its next request */
  keepAliveTimeoutMs: number;
  /** a connection on which nothing moves for this long is closed, whatever it is doing */
  idleTimeoutMs: number;
}

/** Page requests' fair turns (everything handed to the web app). */
export interface WebLimits {
  /** page requests one caller (signed-in user, or address when anonymous) runs at once */
  callerConcurrency: number;
  /** page requests all the callers of one address run at once */
  addressConcurrency: number;
}

/** What one data-API request may cost: rows, bytes, filter inputs, connections held at once. */
export interface DataApiLimits {
  /** rows per response and per embedded array (PostgREST's db-max-rows) */
  maxRows: number;
  /** bytes of JSON in one response body */
  maxResponseBytes: number;
  /** requests one caller (user, or address when anonymous) runs at once; the rest wait their turn */
  callerConcurrency: number;
  /** requests all the callers of one address (an IPv6 /64) run at once, however many accounts */
  addressConcurrency: number;
  /** characters in one like/ilike pattern */
  maxPatternLength: number;
  /** conditions in one request's filters, counting every term of or/and trees */
  maxFilterTerms: number;
  /** count(), sum(), avg(), min(), max() in select (PostgREST's db-aggregates-enabled) */
  aggregatesEnabled: boolean;
}

/** Secrets that production must be given explicitly, in the order they are reported when missing. */
export const REQUIRED_SECRETS = [
  'JWT_SECRET',
  'PROJECT_API_KEY',
  'SERVICE_ROLE_KEY',
  'PAYMENT_WEBHOOK_SECRET',
  'CRON_SECRET',
] as const;
type SecretName = (typeof REQUIRED_SECRETS)[number];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const boolFlag = z
  .enum(['true', 'false', '1', '0', 'on', 'off', 'yes', 'no'])
  .transform((v) => ['true', '1', 'on', 'yes'].includes(v));

const positiveInt = z.coerce.number().int().positive();

/** Seconds, as a number or GoTrue-style with a unit: 60, 60s, 1m, 1h. */
const durationSeconds = z
  .string()
  .regex(/^\d+(s|m|h)?$/, 'must be a number of seconds, or a number with s, m or h (60s, 1m)')
  .transform((v) => {
    const n = Number.parseInt(v, 10);
    return v.endsWith('h') ? n * 3600 : v.endsWith('m') ? n * 60 : n;
  });

const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // Local mode listens on loopback only unless told otherwise: its development mailbox and
  // generated secrets are not for the network. Production listens on every address.
  HOST: z.string().min(1).optional(),
  APP_URL: z.url().optional(),
  AUTH_URL: z.url().optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  APP_MIGRATIONS_DIR: z.string().min(1).optional(),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_ISSUER: z.string().min(1).optional(),
  JWT_KEYS: z.string().trim().min(1).optional(),
  JWT_SECRET_ACCEPTED: boolFlag.default(true),
  JWT_EXPIRY: positiveInt.max(86400).default(3600),
  REFRESH_TOKEN_TTL: positiveInt.default(30 * 24 * 3600),
  REFRESH_TOKEN_REUSE_INTERVAL: z.coerce.number().int().min(0).max(3600).default(10),
  PROJECT_API_KEY: z.string().min(20, 'must be at least 20 characters').optional(),
  SERVICE_ROLE_KEY: z.string().min(20, 'must be at least 20 characters').optional(),
  PAYMENT_WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  CRON_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  AUTH_AUTOCONFIRM: boolFlag.optional(),
  DISABLE_SIGNUP: boolFlag.default(false),
  ENABLE_ANONYMOUS_SIGN_INS: boolFlag.default(false),
  PASSWORD_MIN_LENGTH: positiveInt.min(6).max(72).default(8),
  TRUST_PROXY: boolFlag.default(false),
  RATE_LIMIT_WINDOW: positiveInt.default(300),
  RATE_LIMIT_SIGNIN_PER_EMAIL: positiveInt.default(100),
  RATE_LIMIT_SIGNIN_PER_ADDRESS: positiveInt.default(150),
  RATE_LIMIT_SIGNIN_FAILURES: positiveInt.default(5),
  RATE_LIMIT_SIGNIN_BACKOFF: positiveInt.max(3600).default(1),
  RATE_LIMIT_SIGNIN_BACKOFF_MAX: positiveInt.max(86400).default(900),
  RATE_LIMIT_REFRESH_PER_SESSION: positiveInt.default(60),
  RATE_LIMIT_REFRESH_TRACES: positiveInt.default(30),
  RATE_LIMIT_SIGNUP_PER_ADDRESS: positiveInt.default(30),
  RATE_LIMIT_ANONYMOUS_USERS: positiveInt.default(30),
  RATE_LIMIT_EMAIL_SENT: positiveInt.default(30),
  RATE_LIMIT_OTP_FAILURES: positiveInt.default(20),
  RATE_LIMIT_VERIFY_FAILURES: positiveInt.default(30),
  RATE_LIMIT_MFA_FAILURES: positiveInt.default(5),
  RATE_LIMIT_PASSWORD_CHANGES: positiveInt.default(10),
  API_KEY_REQUESTS_PER_MINUTE: positiveInt.default(600),
  METADATA_MAX_BYTES: positiveInt.min(256).max(1_048_576).default(4096),
  VERIFIED_TOKEN_CACHE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(4 * 1024 * 1024 * 1024)
    .default(32 * 1024 * 1024),
  PASSWORD_HASH_CONCURRENCY: positiveInt.max(256).optional(),
  PASSWORD_HASHES_PER_CALLER: positiveInt.max(10_000).default(8),
  PASSWORD_HASH_QUEUE: positiveInt.max(1_000_000).default(256),
  RECOVERY_SESSION_WINDOW: positiveInt.max(86400).default(900),
  MFA_ENCRYPTION_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  MFA_CHALLENGE_EXPIRY: positiveInt.min(30).max(3600).default(300),
  MFA_MAX_ENROLLED_FACTORS: positiveInt.max(100).default(10),
  PASSKEY_ENABLED: boolFlag.default(true),
  PASSKEY_MAX_PASSKEYS_PER_USER: positiveInt.max(100).default(10),
  MFA_WEBAUTHN_ENROLL_ENABLED: boolFlag.default(true),
  MFA_WEBAUTHN_VERIFY_ENABLED: boolFlag.default(true),
  WEBAUTHN_RP_ID: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9.-]+$/, 'must be a host name (no scheme, port or path)')
    .optional(),
  WEBAUTHN_RP_DISPLAY_NAME: z.string().trim().min(1).max(100).optional(),
  WEBAUTHN_RP_ORIGINS: commaList.pipe(z.array(z.url()).min(1)).optional(),
  WEBAUTHN_CHALLENGE_EXPIRY: durationSeconds.pipe(z.number().min(30).max(3600)).default(300),
  RATE_LIMIT_PASSKEY: positiveInt.default(30),
  SITE_URL: z.url().optional(),
  URI_ALLOW_LIST: commaList.default([]),
  MAILER_OTP_EXP: positiveInt.max(86400).default(3600),
  MAILER_OTP_LENGTH: z.coerce.number().int().min(6).max(10).default(6),
  MAILER_OTP_ATTEMPTS: positiveInt.max(100).default(5),
  SMTP_MAX_FREQUENCY: durationSeconds.pipe(z.number().max(86400)).default(60),
  SECURE_EMAIL_CHANGE: boolFlag.default(true),
  SECURE_PASSWORD_CHANGE: boolFlag.default(false),
  REQUIRE_CURRENT_PASSWORD: boolFlag.default(false),
  SECURITY_MANUAL_LINKING_ENABLED: boolFlag.default(false),
  OAUTH_SERVER_ENABLED: boolFlag.default(false),
  OAUTH_SERVER_MAX_REDIRECT_URIS: positiveInt.max(100).default(10),
  // a path on APP_URL, as GoTrue's authorization_url_path is on SITE_URL
  OAUTH_SERVER_AUTHORIZATION_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/, 'must be a path starting with /')
    .default('/oauth/consent'),
  ID_TOKEN_JWKS_TIMEOUT_MS: positiveInt.min(100).max(60_000).default(5000),
  ID_TOKEN_JWKS_CACHE_MS: positiveInt.min(1000).max(86_400_000).default(600_000),
  MAIL_TEMPLATES_DIR: z.string().min(1).optional(),
  PRODUCT_NAME: z.string().trim().min(1).max(100).default('Tenantry'),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Tenantry <no-reply@localhost>'),
  // GET /metrics for Prometheus: off unless a token is set, then only for a scraper sending it.
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  // Production sends mail over SMTP unless told outright to leave it in the outbox.
  MAIL_DELIVERY: z.enum(['smtp', 'outbox']).optional(),
  // Phone sign-in: off unless a provider is set (or local mode, whose outbox shows the codes).
  SMS_PROVIDER: z.enum(['twilio', 'outbox', 'none']).optional(),
  SMS_TWILIO_ACCOUNT_SID: z.string().trim().min(1).optional(),
  SMS_TWILIO_AUTH_TOKEN: z.string().min(1).optional(),
  SMS_TWILIO_MESSAGE_SERVICE_SID: z.string().trim().min(1).optional(),
  SMS_TWILIO_API_BASE: z.url().default('https://api.twilio.com'),
  SMS_AUTOCONFIRM: boolFlag.default(false),
  SMS_MAX_FREQUENCY: durationSeconds.pipe(z.number().max(86400)).default(60),
  SMS_OTP_EXP: positiveInt.max(86400).default(60),
  SMS_OTP_LENGTH: z.coerce.number().int().min(6).max(10).default(6),
  SMS_TEMPLATE: z
    .string()
    .min(1)
    .max(1000)
    .refine((v) => v.includes('{{ .Code }}'), 'must contain {{ .Code }}')
    .default('Your code is {{ .Code }}'),
  SMS_TEST_OTP: z
    .string()
    .regex(
      /^(\s*\+?[0-9]{2,15}:[0-9]{4,10}\s*)(,\s*\+?[0-9]{2,15}:[0-9]{4,10}\s*)*$/,
      'must be number:code,...',
    )
    .optional(),
  RATE_LIMIT_SMS_SENT: positiveInt.default(30),
  RATE_LIMIT_SMS_PER_NUMBER: positiveInt.default(10),
  RATE_LIMIT_SMS_PER_ADDRESS: positiveInt.default(30),
  MFA_PHONE_MAX_FREQUENCY: durationSeconds.pipe(z.number().max(3600)).default(5),
  BILLING_PLANS: z
    .string()
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of {id, name, priceId}' });
        return z.NEVER;
      }
    })
    .pipe(plansSchema)
    .default([]),
  FREE_PLAN_SEATS: positiveInt.default(10),
  FREE_PLAN_STORAGE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(1024 * 1024 * 1024),
  STORAGE_MAX_UPLOAD_BYTES: positiveInt.max(5 * 1024 ** 4).default(50 * 1024 ** 3),
  APP_PICTURE_MAX_BYTES: positiveInt.max(100 * 1024 * 1024).default(2 * 1024 * 1024),
  APP_PROJECT_FILE_MAX_BYTES: positiveInt.max(5 * 1024 ** 4).default(50 * 1024 * 1024),
  APP_LIVE_TOKEN_SECONDS: z.coerce.number().int().min(20).max(3600).default(120),
  // Comma-separated MIME types (`image/*` for a family), or `*` for any type.
  APP_PROJECT_FILE_TYPES: z
    .string()
    .trim()
    .transform((v) => (v === '*' ? null : v.split(',').map((t) => t.trim().toLowerCase())))
    .pipe(
      z
        .array(
          z
            .string()
            .regex(
              /^[a-z0-9][a-z0-9!#$&^_.+-]*\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$/,
              'must be MIME types like image/png or image/*',
            ),
        )
        .min(1)
        .nullable(),
    )
    .optional(),
  STORAGE_SIGNED_URL_MAX_SECONDS: positiveInt.max(10 * 365 * 86400).default(365 * 86400),
  STORAGE_SIGNED_UPLOAD_SECONDS: positiveInt.max(7 * 86400).default(7200),
  STORAGE_BATCH_MAX: positiveInt.max(10_000).default(1000),
  STORAGE_UPLOAD_IDLE_TIMEOUT_MS: positiveInt.min(100).max(3_600_000).default(30_000),
  STORAGE_RESUMABLE_EXPIRY_SECONDS: positiveInt
    .min(60)
    .max(30 * 86400)
    .default(86400),
  REALTIME_MAX_CONNECTIONS_PER_ADDRESS: positiveInt.max(100_000).default(100),
  REALTIME_MAX_CHANNELS_PER_SOCKET: positiveInt.max(10_000).default(100),
  REALTIME_MAX_MESSAGES_PER_SECOND: positiveInt.max(100_000).default(100),
  REALTIME_MAX_PAYLOAD_BYTES: positiveInt.max(5_000_000).default(256 * 1024),
  REALTIME_HEARTBEAT_TIMEOUT_MS: positiveInt.min(100).max(3_600_000).default(60_000),
  REALTIME_CHANGES_RETENTION_MS: positiveInt
    .min(1000)
    .max(7 * 24 * 3_600_000)
    .default(600_000),
  REALTIME_MAX_RECORD_BYTES: positiveInt
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(1024 * 1024),
  REALTIME_CHANGES_POLL_MS: positiveInt.min(10).max(10_000).default(50),
  REALTIME_MESSAGES_RETENTION_MS: positiveInt
    .min(1000)
    .max(30 * 24 * 3_600_000)
    .default(72 * 3_600_000),
  REALTIME_MAX_CONNECTIONS_PER_USER: positiveInt.max(100_000).default(100),
  REALTIME_MAX_CONNECTIONS_PER_WORKSPACE: positiveInt.max(1_000_000).default(1000),
  REALTIME_MAX_JOINS_PER_SECOND_PER_USER: positiveInt.max(100_000).default(100),
  REALTIME_MAX_JOINS_PER_SECOND_PER_WORKSPACE: positiveInt.max(1_000_000).default(500),
  REALTIME_MAX_MESSAGES_PER_SECOND_PER_USER: positiveInt.max(1_000_000).default(500),
  REALTIME_MAX_MESSAGES_PER_SECOND_PER_WORKSPACE: positiveInt.max(1_000_000).default(2500),
  REALTIME_MAX_PRESENCE_PER_SECOND_PER_USER: positiveInt.max(100_000).default(50),
  REALTIME_MAX_PRESENCE_PER_SECOND_PER_WORKSPACE: positiveInt.max(1_000_000).default(1000),
  REALTIME_PRESENCE_CALLS_PER_WINDOW: positiveInt.max(100_000).default(5),
  REALTIME_PRESENCE_WINDOW_MS: positiveInt.min(100).max(3_600_000).default(30_000),
  REALTIME_MAX_PRESENCE_BYTES: positiveInt.max(5_000_000).default(64 * 1024),
  REALTIME_KEY_CHECK_MS: positiveInt.min(100).max(600_000).default(1000),
  FREE_PLAN_PROJECTS: z.coerce.number().int().min(0).default(1000),
  FREE_PLAN_LIMITS: z
    .string()
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: 'must be a JSON object of resource limits, like {"tasks": 100}',
        });
        return z.NEVER;
      }
    })
    .pipe(resourceLimitsSchema)
    .default({}),
  MAX_WORKSPACES_PER_USER: positiveInt.max(100_000).default(100),
  BILLING_GRACE_DAYS: z.coerce.number().int().min(0).max(365).default(7),
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/, 'must be a Stripe secret key (sk_test_…, sk_live_… or rk_…)')
    .optional(),
  STRIPE_API_BASE: z.url().optional(),
  SCHEDULER: boolFlag.default(true),
  // At least a week: an investigation starts days after the events it looks into.
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(7).max(36500).default(365),
  WEBHOOKS_ALLOW_PRIVATE: boolFlag.default(false),
  WEBHOOKS_ALLOWED_HOSTS: commaList.default([]),
  WEBHOOKS_REQUIRE_HTTPS: boolFlag.optional(),
  // Seconds before each retry; the message gives up after the last one.
  WEBHOOKS_RETRY_SCHEDULE: commaList
    .pipe(
      z
        .array(z.string().regex(/^\d+(\.\d+)?$/, 'must be seconds, e.g. 5,300,1800'))
        .min(1)
        .max(20),
    )
    .transform((list) => list.map(Number))
    .default([5, 300, 1800, 7200, 18000, 36000, 36000]),
  WEBHOOKS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60000).default(10000),
  WEBHOOKS_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(1).max(1000).default(20),
  WEBHOOKS_DISABLE_AFTER_DAYS: z.coerce.number().positive().max(365).default(5),
  WEBHOOKS_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  // host or host:port, comma-separated (an IPv6 address in brackets when it has a port)
  DOMAIN_VERIFICATION_DNS_SERVER: commaList
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+|[A-Za-z0-9.-]+)(:\d{1,5})?$/,
            'must be host or host:port',
          ),
      ),
    )
    .default([]),
  SCHEDULER_TIMEZONE: z
    .string()
    .refine((tz) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    }, 'must be an IANA time zone such as UTC or Europe/Paris')
    .default('UTC'),
  DB_POOL_MAX: positiveInt.max(1000).default(20),
  STATEMENT_TIMEOUT_MS: positiveInt.max(3_600_000).default(8000),
  IDLE_IN_TRANSACTION_TIMEOUT_MS: positiveInt.max(3_600_000).default(30_000),
  DATABASE_POOLER: z.enum(['none', 'session', 'transaction']).default('none'),
  DATABASE_PREPARED_STATEMENTS: boolFlag.optional(),
  DATABASE_LISTEN_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  SCHEMA_POLL_INTERVAL_MS: positiveInt.min(100).max(3_600_000).default(5000),
  DATA_API_MAX_ROWS: positiveInt.max(1_000_000).default(1000),
  DATA_API_MAX_RESPONSE_BYTES: positiveInt.max(256 * 1024 * 1024).default(16 * 1024 * 1024),
  DATA_API_CALLER_CONCURRENCY: positiveInt.max(1000).default(4),
  DATA_API_ADDRESS_CONCURRENCY: positiveInt.max(1000).default(8),
  WEB_CALLER_CONCURRENCY: positiveInt.max(1000).default(4),
  WEB_ADDRESS_CONCURRENCY: positiveInt.max(1000).default(12),
  HTTP_MAX_CONNECTIONS: positiveInt.max(1_000_000).default(4096),
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: positiveInt.max(1_000_000).optional(),
  HTTP_HEADERS_TIMEOUT_MS: positiveInt.min(100).max(600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: positiveInt.min(100).max(3_600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt.min(100).max(600_000).default(5_000),
  HTTP_IDLE_TIMEOUT_MS: positiveInt.min(100).max(3_600_000).default(60_000),
  DATA_API_MAX_PATTERN_LENGTH: positiveInt.max(100_000).default(256),
  DATA_API_MAX_FILTER_TERMS: positiveInt.max(10_000).default(64),
  DATA_API_SCHEMAS: z
    .string()
    .default('public')
    .transform((v) => v.split(',').map((s) => s.trim()))
    .refine(
      (list) => list.length > 0 && list.every((s) => /^[a-z_][a-z0-9_$]{0,62}$/.test(s)),
      'must be a comma-separated list of lower-case schema names, e.g. public,personal',
    )
    .refine((list) => new Set(list).size === list.length, 'names a schema twice')
    .refine(
      (list) => list.every((s) => !INTERNAL_SCHEMAS.includes(s) && !s.startsWith('pg_')),
      `may not name the service's own schemas (${INTERNAL_SCHEMAS.join(', ')}) or pg_*`,
    ),
  DATA_API_TX_END: z
    .enum(['commit', 'commit-allow-override', 'rollback', 'rollback-allow-override'])
    .default('commit'),
  DATA_API_PLAN_ENABLED: boolFlag.default(false),
  DATA_API_AGGREGATES_ENABLED: boolFlag.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  STORAGE_BACKEND: z.enum(['local', 's3']).default('local'),
  STORAGE_LOCAL_DIR: z.string().min(1).optional(),
  STORAGE_S3_ENDPOINT: z
    .url()
    .regex(/^https?:\/\//, 'must be an http:// or https:// URL')
    .optional(),
  STORAGE_S3_BUCKET: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      'must be an S3 bucket name: 3-63 lower-case letters, digits, dots and hyphens',
    )
    .optional(),
  STORAGE_S3_REGION: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/, 'must be a region name such as us-east-1')
    .optional(),
  STORAGE_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  STORAGE_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  STORAGE_S3_FORCE_PATH_STYLE: boolFlag.optional(),
  STORAGE_IMAGE_TRANSFORMATION: z.enum(['on', 'off']).default('on'),
  STORAGE_IMAGE_MAX_SOURCE_BYTES: positiveInt.max(1024 ** 3).default(25 * 1024 * 1024),
  STORAGE_IMAGE_MAX_PIXELS: positiveInt.max(500_000_000).default(50_000_000),
  STORAGE_IMAGE_MAX_DIMENSION: positiveInt.max(16_384).default(2500),
  STORAGE_IMAGE_CONCURRENCY: positiveInt.max(64).default(1),
  STORAGE_IMAGE_QUEUE: z.coerce.number().int().min(0).max(10_000).default(32),
  STORAGE_IMAGE_CACHE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(1024 ** 4)
    .default(256 * 1024 * 1024),
  STORAGE_IMAGE_CACHE_DIR: z.string().min(1).optional(),
});

/**
 * STORAGE_BACKEND and its settings. An S3 backend needs a bucket, and its access key comes whole
 * or not at all (then the SDK's default chain finds one). The secret is kept out of the object's
 * enumerable members, so logging the configuration can never print it.
 */
/**
 * The WebAuthn relying party: by default APP_URL's host and origin, since the pages run the
 * ceremonies there. A browser only accepts an RP id that is the page's host or a registrable
 * suffix of it, so every origin is checked against it now rather than failing every ceremony.
 */
function webauthnConfig(e: z.infer<typeof envSchema>, appUrl: string): WebAuthnConfig {
  const origins = (e.WEBAUTHN_RP_ORIGINS ?? [appUrl]).map((o) => new URL(o).origin);
  const rpId = e.WEBAUTHN_RP_ID ?? new URL(appUrl).hostname;
  const outside = origins.find((o) => {
    const host = new URL(o).hostname;
    return host !== rpId && !host.endsWith(`.${rpId}`);
  });
  if (outside) {
    throw new ConfigError(
      `Invalid configuration: WEBAUTHN_RP_ID: ${rpId} is not the host of ${outside} nor a suffix of it (WEBAUTHN_RP_ORIGINS)`,
    );
  }
  return {
    passkeysEnabled: e.PASSKEY_ENABLED,
    mfaEnrollEnabled: e.MFA_WEBAUTHN_ENROLL_ENABLED,
    mfaVerifyEnabled: e.MFA_WEBAUTHN_VERIFY_ENABLED,
    rpId,
    rpDisplayName: e.WEBAUTHN_RP_DISPLAY_NAME ?? e.PRODUCT_NAME,
    rpOrigins: [...new Set(origins)],
    challengeExpirySeconds: e.WEBAUTHN_CHALLENGE_EXPIRY,
    maxPasskeysPerUser: e.PASSKEY_MAX_PASSKEYS_PER_USER,
    ceremoniesPerAddress: e.RATE_LIMIT_PASSKEY,
  };
}

function storageBackendConfig(e: z.infer<typeof envSchema>, dataDir: string): StorageBackendConfig {
  if (e.STORAGE_BACKEND === 'local') {
    return { kind: 'local', dir: path.resolve(e.STORAGE_LOCAL_DIR ?? path.join(dataDir, 'storage')) };
  }
  if (!e.STORAGE_S3_BUCKET) {
    throw new ConfigError('Invalid configuration: STORAGE_S3_BUCKET: required when STORAGE_BACKEND=s3');
  }
  if ((e.STORAGE_S3_ACCESS_KEY_ID === undefined) !== (e.STORAGE_S3_SECRET_ACCESS_KEY === undefined)) {
    throw new ConfigError(
      'Invalid configuration: STORAGE_S3_ACCESS_KEY_ID and STORAGE_S3_SECRET_ACCESS_KEY: give both or neither',
    );
  }
  let credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  if (e.STORAGE_S3_ACCESS_KEY_ID !== undefined && e.STORAGE_S3_SECRET_ACCESS_KEY !== undefined) {
    credentials = Object.defineProperty({ accessKeyId: e.STORAGE_S3_ACCESS_KEY_ID }, 'secretAccessKey', {
      value: e.STORAGE_S3_SECRET_ACCESS_KEY,
      enumerable: false,
    }) as { accessKeyId: string; secretAccessKey: string };
  }
  return {
    kind: 's3',
    endpoint: e.STORAGE_S3_ENDPOINT,
    bucket: e.STORAGE_S3_BUCKET,
    region: e.STORAGE_S3_REGION ?? 'us-east-1',
    credentials,
    // A custom endpoint is nearly always a server that wants the bucket in the path.
    forcePathStyle: e.STORAGE_S3_FORCE_PATH_STYLE ?? e.STORAGE_S3_ENDPOINT !== undefined,
  };
}

function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Supabase-style API keys: long-lived HS256 JWTs naming the role, so existing tooling recognises them. */
async function mintApiKey(secret: string, role: 'anon' | 'service_role', issuer: string) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(issuer)
    .setIssuedAt(now)
    .setExpirationTime(now + 10 * 365 * 24 * 3600)
    .sign(new TextEncoder().encode(secret));
}

type DevSecrets = Record<SecretName, string>;
/** Local mode also generates an ES256 key set, so tokens verify against the JWKS out of the box. */
type StoredDevSecrets = DevSecrets & { JWT_KEYS: string };

/** Loads the development secrets from DATA_DIR, creating any that are missing (first start). */
async function loadOrCreateDevSecrets(dataDir: string, issuer: string): Promise<StoredDevSecrets> {
  const file = path.join(dataDir, 'dev-secrets.json');
  const stored: Partial<StoredDevSecrets> = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<StoredDevSecrets>)
    : {};
  const jwtSecret = stored.JWT_SECRET ?? randomSecret(48);
  const secrets: StoredDevSecrets = {
    JWT_SECRET: jwtSecret,
    JWT_KEYS: stored.JWT_KEYS ?? (await generateDevKeys()),
    PROJECT_API_KEY: stored.PROJECT_API_KEY ?? (await mintApiKey(jwtSecret, 'anon', issuer)),
    SERVICE_ROLE_KEY: stored.SERVICE_ROLE_KEY ?? (await mintApiKey(jwtSecret, 'service_role', issuer)),
    PAYMENT_WEBHOOK_SECRET: stored.PAYMENT_WEBHOOK_SECRET ?? `whsec_${randomSecret(24)}`,
    CRON_SECRET: stored.CRON_SECRET ?? randomSecret(32),
  };
  if ([...REQUIRED_SECRETS, 'JWT_KEYS' as const].some((name) => stored[name] !== secrets[name])) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  }
  return secrets;
}

const databaseSchema = envSchema.pick({
  DATABASE_URL: true,
  DATA_DIR: true,
  APP_MIGRATIONS_DIR: true,
  DB_POOL_MAX: true,
  STATEMENT_TIMEOUT_MS: true,
  IDLE_IN_TRANSACTION_TIMEOUT_MS: true,
  DATABASE_POOLER: true,
  DATABASE_PREPARED_STATEMENTS: true,
  DATABASE_LISTEN_URL: true,
  SCHEMA_POLL_INTERVAL_MS: true,
});

function databaseLimits(e: z.infer<typeof databaseSchema>): DatabaseLimits {
  return {
    poolMax: e.DB_POOL_MAX,
    statementTimeoutMs: e.STATEMENT_TIMEOUT_MS,
    idleInTransactionTimeoutMs: e.IDLE_IN_TRANSACTION_TIMEOUT_MS,
    pooler: e.DATABASE_POOLER,
    // A transaction-mode pooler hands each transaction to any server connection, where a
    // statement prepared on another does not exist; PgBouncer 1.21+ with max_prepared_statements
    // tracks them itself, which DATABASE_PREPARED_STATEMENTS=on then uses.
    preparedStatements: e.DATABASE_PREPARED_STATEMENTS ?? e.DATABASE_POOLER !== 'transaction',
    listenUrl: e.DATABASE_LISTEN_URL,
    schemaPollIntervalMs: e.SCHEMA_POLL_INTERVAL_MS,
  };
}

export type DatabaseConfig = Pick<
  Config,
  'mode' | 'databaseUrl' | 'dataDir' | 'appMigrationsDir' | 'database'
>;

/**
 * What the database commands (npm run db:*) need, validated as loadConfig validates it: where the
 * database and the migrations are and how to connect. No secrets: they touch none, and an
 * operator with only DATABASE_URL at hand can still migrate or look.
 */
export function loadDatabaseConfig(env: Record<string, string | undefined> = process.env): DatabaseConfig {
  const parsed = databaseSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(`Invalid configuration: ${formatIssues(parsed.error)}`);
  }
  const e = parsed.data;
  return {
    mode: e.DATABASE_URL ? 'production' : 'local',
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.DATA_DIR),
    appMigrationsDir: path.resolve(e.APP_MIGRATIONS_DIR ?? DEFAULT_APP_MIGRATIONS_DIR),
    database: databaseLimits(e),
  };
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

/**
 * Validates the environment. Throws ConfigError naming every bad or missing variable.
 * In local mode, secrets that are not given are generated and kept in DATA_DIR.
 */
export async function loadConfig(env: Record<string, string | undefined> = process.env): Promise<Config> {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(`Invalid configuration: ${formatIssues(parsed.error)}`);
  }
  const e = parsed.data;
  const mode: Mode = e.DATABASE_URL ? 'production' : 'local';
  const port = e.PORT;
  const appUrl = (e.APP_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const authUrl = (e.AUTH_URL ?? appUrl).replace(/\/+$/, '');
  const jwtIssuer = e.JWT_ISSUER ?? `${authUrl}/auth/v1`;
  const dataDir = path.resolve(e.DATA_DIR);

  let secrets: DevSecrets;
  let jwtKeysJson = e.JWT_KEYS;
  if (mode === 'production') {
    const missing = REQUIRED_SECRETS.filter((name) => !e[name]);
    if (missing.length > 0) {
      throw new ConfigError(
        `Missing required secrets for production mode (DATABASE_URL is set): ${missing.join(', ')}`,
      );
    }
    secrets = Object.fromEntries(REQUIRED_SECRETS.map((n) => [n, e[n] as string])) as DevSecrets;
  } else {
    const generated = await loadOrCreateDevSecrets(dataDir, jwtIssuer);
    secrets = Object.fromEntries(REQUIRED_SECRETS.map((n) => [n, e[n] ?? generated[n]])) as DevSecrets;
    jwtKeysJson ??= generated.JWT_KEYS;
  }
  let jwtKeys: TokenKeySet | null = null;
  if (jwtKeysJson !== undefined) {
    try {
      jwtKeys = await parseKeySet(jwtKeysJson);
    } catch (error) {
      // The message names the key and what is wrong with it, never its members.
      throw new ConfigError(`Invalid configuration: JWT_KEYS: ${(error as Error).message}`);
    }
  }
  if (!jwtKeys && !e.JWT_SECRET_ACCEPTED) {
    throw new ConfigError(
      'Invalid configuration: JWT_SECRET_ACCEPTED: JWT_SECRET signs every token until JWT_KEYS is set',
    );
  }
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      'Invalid configuration: HTTP_HEADERS_TIMEOUT_MS: may not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    );
  }
  if (secrets.PROJECT_API_KEY === secrets.SERVICE_ROLE_KEY) {
    throw new ConfigError('PROJECT_API_KEY and SERVICE_ROLE_KEY must differ');
  }
  const siteUrl = (e.SITE_URL ?? appUrl).replace(/\/+$/, '');
  const storageBackend = storageBackendConfig(e, dataDir);
  let templates: AuthMailTemplates;
  let oauthProviders: OAuthProvider[];
  let idToken: IdTokenDeps;
  try {
    oauthProviders = parseOAuthProviders(env, authUrl);
    idToken = {
      ...parseIdTokenSettings(env),
      timeoutMs: e.ID_TOKEN_JWKS_TIMEOUT_MS,
      cacheMs: e.ID_TOKEN_JWKS_CACHE_MS,
    };
    // Both are checked now so a bad pattern or template stops the start, not a sign-up later.
    createRedirectPolicy({ siteUrl, appUrl, allowList: e.URI_ALLOW_LIST });
    templates = loadAuthMailTemplates(e.MAIL_TEMPLATES_DIR);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${(error as Error).message}`, { cause: error });
  }

  return {
    mode,
    port,
    host: e.HOST ?? (mode === 'local' ? '127.0.0.1' : '0.0.0.0'),
    appUrl,
    authUrl,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    appMigrationsDir: path.resolve(e.APP_MIGRATIONS_DIR ?? DEFAULT_APP_MIGRATIONS_DIR),
    jwtSecret: secrets.JWT_SECRET,
    jwtKeys,
    jwtSecretAccepted: e.JWT_SECRET_ACCEPTED,
    jwtIssuer,
    accessTokenTtlSeconds: e.JWT_EXPIRY,
    refreshTokenTtlSeconds: e.REFRESH_TOKEN_TTL,
    refreshTokenReuseIntervalSeconds: e.REFRESH_TOKEN_REUSE_INTERVAL,
    projectApiKey: secrets.PROJECT_API_KEY,
    apiKeyRequestsPerMinute: e.API_KEY_REQUESTS_PER_MINUTE,
    serviceRoleKey: secrets.SERVICE_ROLE_KEY,
    paymentWebhookSecret: secrets.PAYMENT_WEBHOOK_SECRET,
    cronSecret: secrets.CRON_SECRET,
    autoconfirm: e.AUTH_AUTOCONFIRM ?? mode === 'local',
    disableSignup: e.DISABLE_SIGNUP,
    anonymousSignIns: e.ENABLE_ANONYMOUS_SIGN_INS,
    minPasswordLength: e.PASSWORD_MIN_LENGTH,
    trustProxy: e.TRUST_PROXY,
    rateLimits: {
      windowSeconds: e.RATE_LIMIT_WINDOW,
      signInFailuresPerEmail: e.RATE_LIMIT_SIGNIN_PER_EMAIL,
      signInPerAddress: e.RATE_LIMIT_SIGNIN_PER_ADDRESS,
      signInFailuresPerAddress: e.RATE_LIMIT_SIGNIN_FAILURES,
      signInBackoffSeconds: e.RATE_LIMIT_SIGNIN_BACKOFF,
      signInBackoffMaxSeconds: e.RATE_LIMIT_SIGNIN_BACKOFF_MAX,
      refreshPerSession: e.RATE_LIMIT_REFRESH_PER_SESSION,
      refreshTracesPerAddress: e.RATE_LIMIT_REFRESH_TRACES,
      signUpPerAddress: e.RATE_LIMIT_SIGNUP_PER_ADDRESS,
      anonymousSignInsPerAddress: e.RATE_LIMIT_ANONYMOUS_USERS,
      emailSentPerHour: e.RATE_LIMIT_EMAIL_SENT,
      otpFailuresPerEmail: e.RATE_LIMIT_OTP_FAILURES,
      verifyFailuresPerAddress: e.RATE_LIMIT_VERIFY_FAILURES,
      mfaFailuresPerFactor: e.RATE_LIMIT_MFA_FAILURES,
      passwordChangesPerUser: e.RATE_LIMIT_PASSWORD_CHANGES,
    },
    authEmail: {
      siteUrl,
      uriAllowList: e.URI_ALLOW_LIST,
      otpExpirySeconds: e.MAILER_OTP_EXP,
      otpLength: e.MAILER_OTP_LENGTH,
      otpMaxAttempts: e.MAILER_OTP_ATTEMPTS,
      maxFrequencySeconds: e.SMTP_MAX_FREQUENCY,
      secureEmailChange: e.SECURE_EMAIL_CHANGE,
      securePasswordChange: e.SECURE_PASSWORD_CHANGE,
      requireCurrentPassword: e.REQUIRE_CURRENT_PASSWORD,
      productName: e.PRODUCT_NAME,
      templates,
    },
    authSms: smsConfig(e, mode),
    logLevel: e.LOG_LEVEL,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    mailDelivery: e.MAIL_DELIVERY ?? (e.SMTP_URL ? 'smtp' : mode === 'local' ? 'outbox' : undefined),
    appUrlGiven: e.APP_URL !== undefined,
    metricsToken: e.METRICS_TOKEN,
    scheduler: e.SCHEDULER,
    schedulerTimezone: e.SCHEDULER_TIMEZONE,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    webhooks: {
      allowPrivateDestinations: e.WEBHOOKS_ALLOW_PRIVATE,
      allowedHosts: e.WEBHOOKS_ALLOWED_HOSTS.map((h) => h.toLowerCase()),
      // Plain http is for development and for receivers the operator vouches for.
      requireHttps: e.WEBHOOKS_REQUIRE_HTTPS ?? (mode === 'production' && !e.WEBHOOKS_ALLOW_PRIVATE),
      retrySchedule: e.WEBHOOKS_RETRY_SCHEDULE,
      timeoutMs: e.WEBHOOKS_TIMEOUT_MS,
      disableAfterFailedMessages: e.WEBHOOKS_DISABLE_AFTER_FAILURES,
      disableAfterDays: e.WEBHOOKS_DISABLE_AFTER_DAYS,
      logRetentionDays: e.WEBHOOKS_LOG_RETENTION_DAYS,
    },
    domainVerificationDnsServers: e.DOMAIN_VERIFICATION_DNS_SERVER,
    billingPlans: e.BILLING_PLANS,
    freePlanSeats: e.FREE_PLAN_SEATS,
    freePlanProjects: e.FREE_PLAN_PROJECTS,
    freePlanLimits: e.FREE_PLAN_LIMITS,
    storage: {
      maxUploadBytes: e.STORAGE_MAX_UPLOAD_BYTES,
      signedUrlMaxSeconds: e.STORAGE_SIGNED_URL_MAX_SECONDS,
      signedUploadSeconds: e.STORAGE_SIGNED_UPLOAD_SECONDS,
      batchMax: e.STORAGE_BATCH_MAX,
      uploadIdleTimeoutMs: e.STORAGE_UPLOAD_IDLE_TIMEOUT_MS,
      resumableExpirySeconds: e.STORAGE_RESUMABLE_EXPIRY_SECONDS,
      freePlanStorageBytes: e.FREE_PLAN_STORAGE_BYTES === 0 ? null : e.FREE_PLAN_STORAGE_BYTES,
    },
    appFiles: {
      pictureMaxBytes: e.APP_PICTURE_MAX_BYTES,
      projectFileMaxBytes: e.APP_PROJECT_FILE_MAX_BYTES,
      projectFileTypes:
        e.APP_PROJECT_FILE_TYPES === undefined ? DEFAULT_PROJECT_FILE_TYPES : e.APP_PROJECT_FILE_TYPES,
    },
    appLiveTokenSeconds: e.APP_LIVE_TOKEN_SECONDS,
    realtime: {
      maxConnectionsPerAddress: e.REALTIME_MAX_CONNECTIONS_PER_ADDRESS,
      maxChannelsPerSocket: e.REALTIME_MAX_CHANNELS_PER_SOCKET,
      maxMessagesPerSecond: e.REALTIME_MAX_MESSAGES_PER_SECOND,
      maxPayloadBytes: e.REALTIME_MAX_PAYLOAD_BYTES,
      heartbeatTimeoutMs: e.REALTIME_HEARTBEAT_TIMEOUT_MS,
      changesRetentionMs: e.REALTIME_CHANGES_RETENTION_MS,
      maxRecordBytes: e.REALTIME_MAX_RECORD_BYTES,
      changesPollMs: e.REALTIME_CHANGES_POLL_MS,
      messagesRetentionMs: e.REALTIME_MESSAGES_RETENTION_MS,
      maxConnectionsPerUser: e.REALTIME_MAX_CONNECTIONS_PER_USER,
      maxConnectionsPerWorkspace: e.REALTIME_MAX_CONNECTIONS_PER_WORKSPACE,
      maxJoinsPerSecondPerUser: e.REALTIME_MAX_JOINS_PER_SECOND_PER_USER,
      maxJoinsPerSecondPerWorkspace: e.REALTIME_MAX_JOINS_PER_SECOND_PER_WORKSPACE,
      maxMessagesPerSecondPerUser: e.REALTIME_MAX_MESSAGES_PER_SECOND_PER_USER,
      maxMessagesPerSecondPerWorkspace: e.REALTIME_MAX_MESSAGES_PER_SECOND_PER_WORKSPACE,
      maxPresencePerSecondPerUser: e.REALTIME_MAX_PRESENCE_PER_SECOND_PER_USER,
      maxPresencePerSecondPerWorkspace: e.REALTIME_MAX_PRESENCE_PER_SECOND_PER_WORKSPACE,
      presenceCallsPerWindow: e.REALTIME_PRESENCE_CALLS_PER_WINDOW,
      presenceWindowMs: e.REALTIME_PRESENCE_WINDOW_MS,
      maxPresenceBytes: e.REALTIME_MAX_PRESENCE_BYTES,
      keyCheckMs: e.REALTIME_KEY_CHECK_MS,
    },
    maxWorkspacesPerUser: e.MAX_WORKSPACES_PER_USER,
    billingGraceDays: e.BILLING_GRACE_DAYS,
    stripeSecretKey: e.STRIPE_SECRET_KEY,
    stripeApiBase: e.STRIPE_API_BASE,
    database: databaseLimits(e),
    http: {
      maxConnections: e.HTTP_MAX_CONNECTIONS,
      // Behind a trusted proxy every connection comes from the proxy: one address is everyone.
      maxConnectionsPerAddress: Math.min(
        e.HTTP_MAX_CONNECTIONS,
        e.HTTP_MAX_CONNECTIONS_PER_ADDRESS ?? (e.TRUST_PROXY ? e.HTTP_MAX_CONNECTIONS : 256),
      ),
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      idleTimeoutMs: e.HTTP_IDLE_TIMEOUT_MS,
    },
    web: {
      callerConcurrency: e.WEB_CALLER_CONCURRENCY,
      addressConcurrency: e.WEB_ADDRESS_CONCURRENCY,
    },
    dataApi: {
      maxRows: e.DATA_API_MAX_ROWS,
      maxResponseBytes: e.DATA_API_MAX_RESPONSE_BYTES,
      callerConcurrency: e.DATA_API_CALLER_CONCURRENCY,
      addressConcurrency: e.DATA_API_ADDRESS_CONCURRENCY,
      maxPatternLength: e.DATA_API_MAX_PATTERN_LENGTH,
      maxFilterTerms: e.DATA_API_MAX_FILTER_TERMS,
      schemas: e.DATA_API_SCHEMAS,
      txEnd: e.DATA_API_TX_END,
      planEnabled: e.DATA_API_PLAN_ENABLED,
      aggregatesEnabled: e.DATA_API_AGGREGATES_ENABLED,
    },
    oauthProviders,
    idToken,
    manualLinking: e.SECURITY_MANUAL_LINKING_ENABLED,
    oauthServer: {
      enabled: e.OAUTH_SERVER_ENABLED,
      maxRedirectUris: e.OAUTH_SERVER_MAX_REDIRECT_URIS,
      authorizationUrl: appUrl.replace(/\/+$/, '') + e.OAUTH_SERVER_AUTHORIZATION_PATH,
    },
    mfa: {
      encryptionKey: e.MFA_ENCRYPTION_KEY ?? secrets.JWT_SECRET,
      challengeExpirySeconds: e.MFA_CHALLENGE_EXPIRY,
      maxEnrolledFactors: e.MFA_MAX_ENROLLED_FACTORS,
    },
    webauthn: webauthnConfig(e, appUrl),
    identity: {
      metadataMaxBytes: e.METADATA_MAX_BYTES,
      verifiedTokenCacheBytes: e.VERIFIED_TOKEN_CACHE_BYTES,
      passwordHashConcurrency: e.PASSWORD_HASH_CONCURRENCY ?? defaultHashConcurrency(env),
      passwordHashesPerCaller: e.PASSWORD_HASHES_PER_CALLER,
      passwordHashQueue: e.PASSWORD_HASH_QUEUE,
      recoverySessionSeconds: e.RECOVERY_SESSION_WINDOW,
    },
    storageBackend,
    storageImages: {
      enabled: e.STORAGE_IMAGE_TRANSFORMATION === 'on',
      maxSourceBytes: e.STORAGE_IMAGE_MAX_SOURCE_BYTES,
      maxPixels: e.STORAGE_IMAGE_MAX_PIXELS,
      maxDimension: e.STORAGE_IMAGE_MAX_DIMENSION,
      concurrency: e.STORAGE_IMAGE_CONCURRENCY,
      queue: e.STORAGE_IMAGE_QUEUE,
      cacheBytes: e.STORAGE_IMAGE_CACHE_BYTES,
      cacheDir: path.resolve(e.STORAGE_IMAGE_CACHE_DIR ?? path.join(dataDir, 'image-cache')),
    },
  };
}

/**
 * Hashes run in libuv's thread pool (UV_THREADPOOL_SIZE, 4 by default), which file reads, DNS and
 * compression share: one thread is left for them, and no more hashes run than there are cores.
 */
function defaultHashConcurrency(env: Record<string, string | undefined>): number {
  const threads = Number.parseInt(env.UV_THREADPOOL_SIZE ?? '', 10) || 4;
  return Math.max(1, Math.min(availableParallelism(), threads - 1));
}

/** SMS_*: Twilio needs its three values; the outbox is for local mode only, never production. */
function smsConfig(e: z.infer<typeof envSchema>, mode: Mode): AuthSmsConfig {
  const kind = e.SMS_PROVIDER ?? (e.SMS_TWILIO_ACCOUNT_SID ? 'twilio' : mode === 'local' ? 'outbox' : 'none');
  let provider: SmsProviderConfig;
  if (kind === 'twilio') {
    const missing = (
      ['SMS_TWILIO_ACCOUNT_SID', 'SMS_TWILIO_AUTH_TOKEN', 'SMS_TWILIO_MESSAGE_SERVICE_SID'] as const
    ).filter((name) => !e[name]);
    if (missing.length > 0) {
      throw new ConfigError(`Invalid configuration: SMS_PROVIDER twilio needs ${missing.join(', ')}`);
    }
    provider = {
      kind: 'twilio',
      twilio: {
        accountSid: e.SMS_TWILIO_ACCOUNT_SID!,
        authToken: e.SMS_TWILIO_AUTH_TOKEN!,
        messageServiceSid: e.SMS_TWILIO_MESSAGE_SERVICE_SID!,
        apiBase: e.SMS_TWILIO_API_BASE,
        timeoutMs: 10_000,
      },
    };
  } else if (kind === 'outbox') {
    // Codes in a table nobody reads would sign anyone in: production has no outbox for them.
    if (mode === 'production') {
      throw new ConfigError('Invalid configuration: SMS_PROVIDER outbox is for local mode only');
    }
    provider = { kind: 'outbox' };
  } else {
    provider = { kind: 'none' };
  }
  const testOtp: Record<string, string> = {};
  for (const pair of (e.SMS_TEST_OTP ?? '').split(',')) {
    const [number, code] = pair.trim().split(':');
    if (number && code) testOtp[number.replace(/^\+/, '')] = code;
  }
  return {
    provider,
    autoconfirm: e.SMS_AUTOCONFIRM,
    maxFrequencySeconds: e.SMS_MAX_FREQUENCY,
    otpExpirySeconds: e.SMS_OTP_EXP,
    otpLength: e.SMS_OTP_LENGTH,
    template: e.SMS_TEMPLATE,
    testOtp,
    sentPerHour: e.RATE_LIMIT_SMS_SENT,
    perNumberPerHour: e.RATE_LIMIT_SMS_PER_NUMBER,
    perAddressPerHour: e.RATE_LIMIT_SMS_PER_ADDRESS,
    mfaPhoneMaxFrequencySeconds: e.MFA_PHONE_MAX_FREQUENCY,
  };
}
