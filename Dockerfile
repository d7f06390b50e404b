# The image of the API and the worker (docker-compose.yml runs both from it).
# Checked by hadolint in .ci/run (rules it skips, and why: .hadolint.yaml).

# Build: every dependency, the compiled JavaScript and the prebuilt workflow bundle.
FROM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY api ./api
COPY workflows ./workflows
COPY activities ./activities
COPY migrations ./migrations
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Runtime: production dependencies only (no embedded PostgreSQL, tsx, test server), Debian's
# security-maintained FFmpeg (7.1 in Debian 13) for probing and encoding, bubblewrap to sandbox it
# (FFMPEG_SANDBOX, required in production), a non-root user that owns the one writable path.
FROM node:24-trixie-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg bubblewrap \
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
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
# node (1000:1000), by number so that a host or an orchestrator resolves it.
USER 1000:1000
VOLUME ["/var/lib/intake"]
EXPOSE 8080
CMD ["node", "dist/src/main/api.js"]
