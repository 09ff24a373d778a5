# The agent worker's image, as docker-compose.yml runs it, in two stages: `dev` installs
# everything and compiles the sources to dist/; `runtime` (the default target, the last
# stage) holds the compiled output, the launchers and production dependencies only, so no
# tests, benchmarks, scripts, TypeScript sources or tsx. Node 20 like the rest of the
# project: the Temporal native bridge ships prebuilt for glibc on x64 and arm64, which the
# Debian-based slim image provides (Alpine's musl would need a source build).
# test/compiled-worker.test.ts rebuilds the runtime stage from this file on a machine
# without Docker and runs a session turn through it.
ARG NODE_VERSION=20.20.2

# Also the image of the scripted LLM, a development convenience that runs from source.
FROM node:${NODE_VERSION}-slim AS dev
WORKDIR /app
# Dependencies first, so editing source does not reinstall them; `npm ci` installs exactly
# the lockfile. npm's download cache is a build cache, kept between builds and out of the
# image.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
RUN npm run build
USER node

FROM node:${NODE_VERSION}-slim AS runtime
WORKDIR /app
# The worker makes its tools' workspace here (AGENT_WORKSPACE, .data/workspace) as the node user.
RUN chown node:node /app
COPY --chown=node:node package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
# bin/ for the package's `agent` command (npx agent list); it runs dist/ when no source is
# there to be newer.
COPY --chown=node:node bin ./bin
COPY --chown=node:node --from=dev /app/dist ./dist
USER node
ENV TEMPORAL_ADDRESS=temporal:7233
# Plain node on the compiled worker: no npm in between, and no TypeScript compiler at start.
CMD ["node", "dist/worker/main.js"]
