# The image of the API and the worker (docker-compose.yml runs both from it).
# Checked by hadolint in .ci/run (rules it skips, and why: .hadolint.yaml).

# Build: the build's dependencies, the compiled JavaScript and the prebuilt workflow bundle. No
# install scripts run, and the dev stack's Node download and PostgreSQL are dropped from the lockfile
# first: nothing is downloaded here to be pruned later. The optional build secret `ca` is a CA bundle
# for a TLS-inspecting proxy (`--secret id=ca,src=ca.pem`); without it nothing changes.
FROM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY deploy/image/without-dev-stack.mjs deploy/image/
RUN --mount=type=secret,id=ca,required=false \
  node deploy/image/without-dev-stack.mjs \
  && if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
  && npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY api ./api
COPY workflows ./workflows
COPY activities ./activities
COPY migrations ./migrations
RUN npm run build

# Production dependencies only, with this platform's Temporal core bridge only.
FROM node:24-trixie-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY deploy/image/prune-node-modules.mjs deploy/image/
RUN --mount=type=secret,id=ca,required=false \
  if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
  && npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
  && node deploy/image/prune-node-modules.mjs

# Runtime: production dependencies only (no embedded PostgreSQL, tsx, test server), Debian's
# security-maintained FFmpeg (7.1 in Debian 13) for probing and encoding, bubblewrap to sandbox it
# (FFMPEG_SANDBOX, required in production), a non-root user that owns the one writable path.
FROM node:24-trixie-slim
ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="Intake" \
  org.opencontainers.image.description="The ingestion service of a customer-insight platform: feedback, agent conversations, recordings" \
  org.opencontainers.image.version="${VERSION}" \
  org.opencontainers.image.revision="${REVISION}"
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# The GL stack's compiler and drivers (LLVM, Mesa's gallium, Z3: about 190 MB) come with FFmpeg's
# packages, but FFmpeg never loads them headless (GL is dispatched at run time): dpkg leaves their
# files out, and the build fails if FFmpeg then misses a library. Documentation, translations and
# the downloaded packages are left out too.
RUN printf '%s\n' 'path-exclude=/usr/lib/*/libLLVM*' 'path-exclude=/usr/lib/*/libgallium*' 'path-exclude=/usr/lib/*/libz3.so*' \
    'path-exclude=/usr/share/doc/*' 'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' \
    > /etc/dpkg/dpkg.cfg.d/intake-headless \
  && apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg bubblewrap \
  && if ldd /usr/bin/ffmpeg /usr/bin/ffprobe | grep 'not found'; then exit 1; fi \
  && apt-get clean \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /var/lib/intake \
  && chown node:node /var/lib/intake
WORKDIR /app
ENV NODE_ENV=production \
  DATA_DIR=/var/lib/intake \
  STORAGE_DIR=/var/lib/intake/media \
  WORKFLOW_BUNDLE_PATH=dist/workflow-bundle.js \
  FFMPEG_PATH=/usr/bin/ffmpeg \
  FFPROBE_PATH=/usr/bin/ffprobe
COPY --from=build /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
# node (1000:1000), by number so that a host or an orchestrator resolves it.
USER 1000:1000
VOLUME ["/var/lib/intake"]
EXPOSE 8080
CMD ["node", "dist/src/main/api.js"]
