# The agent worker (and, with another command, the scripted LLM server and the client),
# as docker-compose.yml runs them. Node 20 like the rest of the project: the Temporal
# native bridge ships prebuilt for glibc on x64 and arm64, which the Debian-based
# slim image provides (Alpine's musl would need a source build).
ARG NODE_VERSION=20.20.2
FROM node:${NODE_VERSION}-slim

WORKDIR /app

# Dependencies first, so editing source does not reinstall them. `npm ci` installs
# exactly the lockfile; tsx is a runtime dependency, so TypeScript runs as in development.
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY --chown=node:node . .

USER node
ENV TEMPORAL_ADDRESS=temporal:7233
CMD ["npm", "run", "worker"]
