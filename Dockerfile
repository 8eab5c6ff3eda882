# One image for the whole fleet; the container command picks the service (deploy/k8s).
# the runtime of .node-version (a test holds the two equal: deploy/k8s/test/manifests.test.js)
ARG NODE_VERSION=24.21.0
FROM node:${NODE_VERSION}-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/* && npm install -g pnpm@12
WORKDIR /app
COPY . .
ENV npm_config_nodedir=/usr/local
RUN pnpm install --frozen-lockfile && pnpm exec turbo run build && pnpm prune --prod

FROM node:${NODE_VERSION}-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends softhsm2 ca-certificates postgresql-client && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app /app
USER 10001
# V8 flags: scripts/node-flags.json, which scripts/fleet.mjs gives every service (the young generation as on Node 20: docs/performance.md)
ENV AGW_PROFILE=production NODE_ENV=production NODE_OPTIONS="--max-semi-space-size=16"
CMD ["node", "services/gateway/dist/main.js"]
