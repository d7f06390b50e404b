# Image for the API and the worker (docker-compose.yml runs both from it).
FROM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-trixie-slim
# FFmpeg from Debian (13: FFmpeg 7.1, security-maintained); probing and encoding use this one build.
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production WORKFLOW_BUNDLE_PATH=dist/workflow-bundle.js FFMPEG_PATH=/usr/bin/ffmpeg FFPROBE_PATH=/usr/bin/ffprobe
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/migrations ./migrations
USER node
EXPOSE 8080
CMD ["node", "dist/src/main/api.js"]
