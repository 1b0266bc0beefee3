# tollgate container image: build the TypeScript once, ship only runtime dependencies.
# Used by docker-compose.yml (`docker compose up --build`) and deploy/kubernetes/.
#
#   docker build -t tollgate:0.1.0 \
#     --build-arg REVISION="$(git rev-parse HEAD)" --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" .
#
# Node.js 24 is an LTS line supported until April 2028 (Node 20 reached its end of life in April
# 2026). The test suite runs on the development machine's Node 20; package.json `engines` says what
# both accept. test/examples/dockerfile.test.ts checks this file against package.json,
# the Kubernetes manifests and src/settings-schema.ts.
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE}
ARG NODE_IMAGE
# The release's version (package.json's; a test keeps the default equal), commit and build time.
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="tollgate" \
      org.opencontainers.image.description="Rate limit service for Envoy and Istio gateways (Envoy RLS v3 + ext_authz), Redis or in-process GCRA" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
WORKDIR /app
# No TOLLGATE_CONFIG/TOLLGATE_*_ADDR here: they would shadow envoyproxy/ratelimit's RUNTIME_ROOT,
# PORT and GRPC_PORT in a drop-in Deployment. The default --config, ./config, points at
# /etc/tollgate/config, and the listen defaults are 0.0.0.0:8081 (gRPC) and 0.0.0.0:8080 (HTTP).
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY lua ./lua
COPY proto ./proto
COPY LICENSE ./
# envoyproxy/ratelimit's entry point (docker/ratelimit): swap the image, keep the Deployment.
COPY docker/ratelimit /bin/ratelimit
RUN ln -s /etc/tollgate/config /app/config && chmod 0755 /bin/ratelimit
# The official image's `node` user, by number: Kubernetes' runAsNonRoot can only verify a numeric
# user. The app's files stay root-owned, so the process cannot change its own code.
USER 1000:1000
# 8081: gRPC (RLS ShouldRateLimit, ext_authz Check, health); 8080: HTTP (/healthcheck, /livez,
# /json, /rlconfig, /metrics); 6070: the debug port under /bin/ratelimit (envoyproxy/ratelimit's
# DEBUG_PORT: /rlconfig, /healthcheck, /metrics).
EXPOSE 8081 8080 6070
# GET /healthcheck on the HTTP address serve listens on (read by the settings loader: --http-addr's
# TOLLGATE_HTTP_ADDR, else a drop-in Deployment's HOST/PORT, else 0.0.0.0:8080): healthy while
# serving, unhealthy before the config is loaded and while draining. Kubernetes ignores it and uses
# the Deployment's probes.
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "dist/healthcheck.js"]
# A 64 MB young generation: calls waiting on Redis survive fewer scavenges (bench/RESULTS.md:
# +18-30% throughput in the Redis modes for ~50 MB more RSS under load). Workers inherit it.
ENTRYPOINT ["node", "--max-semi-space-size=64", "dist/cli.js"]
CMD ["serve"]
