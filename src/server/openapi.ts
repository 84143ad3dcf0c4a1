// In charge of the OpenAPI document for the service's own REST endpoints (the token grants, the
// payment webhook and the digest trigger), served at GET /api/openapi.json. The response schemas
// are zod schemas, so the tests check the real responses against exactly what is published.
import { z } from 'zod';

export const schemas = {
  TokenResponse: z.object({
    access_token: z.string(),
    token_type: z.literal('bearer'),
    expires_in: z.literal(3600).or(z.number().int().positive()),
    expires_at: z.number().int(),
    refresh_token: z.string(),
    user: z.object({ id: z.string(), email: z.string() }).loose(),
  }),
  AuthError: z.object({
    error: z.string(),
    error_description: z.string(),
    error_code: z.string(),
    msg: z.string(),
    code: z.number().int(),
  }),
  WebhookAccepted: z.object({
    received: z.literal(true),
    id: z.string(),
    outcome: z.enum(['processed', 'ignored', 'duplicate', 'refused']),
  }),
  WebhookError: z.object({ error: z.string(), message: z.string() }),
  DigestResult: z.object({
    ok: z.literal(true),
    frequency: z.enum(['daily', 'weekly']),
    sent: z.number().int().nonnegative(),
  }),
  DigestError: z.object({ ok: z.literal(false), error: z.string(), message: z.string() }),
};

type SchemaName = keyof typeof schemas;

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: SchemaName, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
});

export function openApiDocument(urls: { appUrl: string; authUrl: string }) {
  const components = Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => {
      const { $schema: _ignored, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
      return [name, rest];
    }),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tenantry REST endpoints',
      version: '1',
      description:
        'The token grants of the identity service, the payment webhook and the digest trigger. The rest of ' +
        '/auth/v1 and /rest/v1 follow Supabase Auth and PostgREST (docs/api).',
    },
    servers: [{ url: urls.appUrl }],
    components: {
      schemas: components,
      securitySchemes: {
        apikey: { type: 'apiKey', in: 'header', name: 'apikey' },
        cronSecret: { type: 'http', scheme: 'bearer', description: 'CRON_SECRET' },
        stripeSignature: { type: 'apiKey', in: 'header', name: 'Stripe-Signature' },
      },
    },
    paths: {
      '/auth/v1/token': {
        post: {
          summary: 'Sign in with a password, exchange a refresh token, or exchange a PKCE code',
          servers: [{ url: urls.authUrl }],
          security: [{ apikey: [] }],
          parameters: [
            {
              name: 'grant_type',
              in: 'query',
              required: true,
              schema: { enum: ['password', 'refresh_token', 'pkce'] },
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  oneOf: [
                    {
                      type: 'object',
                      required: ['email', 'password'],
                      properties: {
                        email: { type: 'string', format: 'email' },
                        password: { type: 'string' },
                      },
                    },
                    {
                      type: 'object',
                      required: ['refresh_token'],
                      properties: { refresh_token: { type: 'string' } },
                    },
                    {
                      type: 'object',
                      required: ['auth_code', 'code_verifier'],
                      properties: { auth_code: { type: 'string' }, code_verifier: { type: 'string' } },
                    },
                  ],
                },
              },
            },
          },
          responses: {
            '200': json('TokenResponse', 'A session'),
            '400': json(
              'AuthError',
              'Invalid credentials (error invalid_grant), invalid refresh token, bad input',
            ),
            '401': json('AuthError', 'Missing or unknown apikey'),
            '404': json('AuthError', 'PKCE: unknown or already used code (flow_state_not_found)'),
            '413': json('AuthError', 'Body over 1 MB'),
            '422': json('AuthError', 'PKCE: code older than 5 minutes (flow_state_expired)'),
            '429': json('AuthError', 'Rate limit reached (Retry-After)'),
          },
        },
      },
      '/api/billing/webhook': {
        post: {
          summary: 'Receive a Stripe event',
          security: [{ stripeSignature: [] }],
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
          responses: {
            '200': json('WebhookAccepted', 'Verified; processed, ignored (unhandled type) or already seen'),
            '400': json('WebhookError', 'Missing signature or invalid payload'),
            '401': json('WebhookError', 'Signature verification failed'),
            '413': json('WebhookError', 'Body over 1 MB'),
            '500': json('WebhookError', 'A handler failed; recorded as failed, retried by Stripe'),
          },
        },
      },
      '/api/notifications/digest': {
        post: {
          summary: 'Send the activity digests that are due',
          security: [{ cronSecret: [] }],
          parameters: [
            { name: 'frequency', in: 'query', required: true, schema: { enum: ['daily', 'weekly'] } },
          ],
          responses: {
            '200': json('DigestResult', 'Digests queued by this call'),
            '400': json('DigestError', 'frequency missing or not daily/weekly'),
            '401': json('DigestError', 'CRON_SECRET missing or wrong'),
          },
        },
        get: {
          summary: 'The same, for schedulers that can only send GET',
          security: [{ cronSecret: [] }],
          parameters: [
            { name: 'frequency', in: 'query', required: true, schema: { enum: ['daily', 'weekly'] } },
          ],
          responses: {
            '200': json('DigestResult', 'Digests queued by this call'),
            '400': json('DigestError', 'frequency missing or not daily/weekly'),
            '401': json('DigestError', 'CRON_SECRET missing or wrong'),
          },
        },
      },
    },
  };
}
