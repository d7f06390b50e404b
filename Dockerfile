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
COPY console ./console
COPY clients/typescript/src ./clients/typescript/src
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

# FFmpeg from Debian's source package (so Debian's security fixes arrive with every rebuild),
# configured with only what Intake runs (src/media/ffmpeg.ts: the containers and decoders it accepts,
# AAC, H.264 and MP3 encodes; the transcriber's PCM and MP3; the local recorder's tone): about 20 MB
# with its codec libraries, where Debian's ffmpeg package brings 250 MB of libraries it never loads.
FROM node:24-trixie-slim AS ffmpeg
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
RUN if [ -f /etc/apt/sources.list.d/debian.sources ]; then \
      sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > /etc/apt/sources.list.d/debian-src.sources; fi \
  && if [ -s /etc/apt/sources.list ]; then sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > /etc/apt/sources.list.d/debian-src.list; fi \
  && apt-get update \
  && apt-get install -y --no-install-recommends build-essential nasm pkgconf dpkg-dev xz-utils \
    libx264-dev libdav1d-dev libopus-dev libvorbis-dev libmp3lame-dev zlib1g-dev \
  && apt-get source --only-source ffmpeg
# The source directory is named after the version Debian ships (ffmpeg-7.1.x): WORKDIR cannot glob.
# hadolint ignore=DL3003
RUN cd ffmpeg-*/ \
  && ./configure --prefix=/opt/ffmpeg --extra-version=intake --disable-everything --disable-autodetect \
    --disable-doc --disable-debug --disable-ffplay --enable-gpl --enable-pthreads --enable-zlib \
    --enable-libx264 --enable-libdav1d --enable-libopus --enable-libvorbis --enable-libmp3lame \
    --enable-protocol=fd,file,pipe \
    --enable-demuxer=mov,matroska,mp3,wav,ogg,flac,aac,mpegts \
    --enable-indev=lavfi \
    --enable-decoder=h264,hevc,vp8,vp9,av1,libdav1d,mpeg4,theora,mjpeg,aac,aac_fixed,mp3,mp3float,mp2,mp2float,ac3,ac3_fixed,eac3,opus,libopus,vorbis,libvorbis,flac,alac,amrnb,amrwb,pcm_s16le,pcm_s16be,pcm_s24le,pcm_s32le,pcm_f32le,pcm_f64le,pcm_u8,pcm_mulaw,pcm_alaw,png,movtext,subrip,ass,ssa,webvtt,text \
    --enable-parser=aac,ac3,av1,flac,h264,hevc,mjpeg,mpeg4video,mpegaudio,opus,png,vorbis,vp8,vp9 \
    --enable-bsf=aac_adtstoasc,extract_extradata,h264_mp4toannexb,hevc_mp4toannexb,vp9_superframe_split,null \
    --enable-encoder=aac,libx264,libmp3lame,pcm_s16le \
    --enable-muxer=mp4,ipod,mp3,wav,pcm_s16le \
    --enable-filter=abuffer,abuffersink,buffer,buffersink,aformat,format,aresample,anull,null,acopy,copy,atrim,trim,asetpts,setpts,scale,transpose,hflip,vflip,sine \
  && make -j"$(nproc)" \
  && make install \
  && /opt/ffmpeg/bin/ffmpeg -hide_banner -version | head -1

# Runtime: production dependencies only (no embedded PostgreSQL, tsx, test server), the FFmpeg built
# above with Debian's codec libraries it links, bubblewrap to sandbox it (FFMPEG_SANDBOX, required in
# production), a non-root user that owns the one writable path.
FROM node:24-trixie-slim
ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="Intake" \
  org.opencontainers.image.description="The ingestion service of a customer-insight platform: feedback, agent conversations, recordings" \
  org.opencontainers.image.version="${VERSION}" \
  org.opencontainers.image.revision="${REVISION}"
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Documentation, translations and the downloaded packages are left out; the build fails if FFmpeg
# misses a library.
COPY --from=ffmpeg /opt/ffmpeg/bin/ffmpeg /opt/ffmpeg/bin/ffprobe /usr/local/bin/
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' \
    > /etc/dpkg/dpkg.cfg.d/intake-slim \
  && apt-get update \
  && apt-get install -y --no-install-recommends libx264-164 libdav1d7 libopus0 libvorbis0a libvorbisenc2 libmp3lame0 bubblewrap \
  && if ldd /usr/local/bin/ffmpeg /usr/local/bin/ffprobe | grep 'not found'; then exit 1; fi \
  && apt-get clean \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /var/lib/intake \
  && chown node:node /var/lib/intake
WORKDIR /app
ENV NODE_ENV=production \
  DATA_DIR=/var/lib/intake \
  STORAGE_DIR=/var/lib/intake/media \
  WORKFLOW_BUNDLE_PATH=dist/workflow-bundle.js \
  FFMPEG_PATH=/usr/local/bin/ffmpeg \
  FFPROBE_PATH=/usr/local/bin/ffprobe
COPY --from=build /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
# node (1000:1000), by number so that a host or an orchestrator resolves it.
USER 1000:1000
VOLUME ["/var/lib/intake"]
EXPOSE 8080
CMD ["node", "dist/src/main/api.js"]
