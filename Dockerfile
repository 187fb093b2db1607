# One image for every component; the compose file and the Kubernetes manifests choose the
# component with the command (node <component>/dist/start.js). Size budget: 300 MB.
# Node 24 is an LTS line supported until 2028-04-30 (Node 20 reached end of life on 2026-04-30).
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first, so the dependency layer is cached until a package.json changes.
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY contracts/package.json contracts/
COPY services/platform/package.json services/platform/
COPY services/coupon/package.json services/coupon/
COPY services/affiliate/package.json services/affiliate/
COPY services/referral/package.json services/referral/
COPY services/sale/package.json services/sale/
COPY services/webhook-dispatcher/package.json services/webhook-dispatcher/
COPY gateway/package.json gateway/
COPY clients/typescript/package.json clients/typescript/
COPY console/package.json console/
# No install scripts run (a dependency's postinstall is code from the registry, run at build time);
# esbuild's is the one the build needs: it puts the console bundler's native binary in place. Scarf's
# telemetry (pulled in by swagger-ui-dist) is off twice: scarfSettings in package.json and here.
ENV SCARF_ANALYTICS=false
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild esbuild
COPY contracts contracts
COPY services services
COPY gateway gateway
COPY clients clients
COPY console console
# The guides served at /docs/guides (gateway/src/docs/routes.ts reads them at start).
COPY docs/guides docs/guides
RUN npx tsc -b && npm run build -w console && npm prune --omit=dev --no-audit --no-fund \
  && find . -path ./node_modules -prune -o \( -name '*.ts' ! -name '*.d.ts' -o -name test -type d \) -print | grep -v '^./node_modules' | xargs rm -rf

FROM ${NODE_IMAGE}
# In a container the process listens on every interface of its own network namespace.
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
# Owned by root (files 644, directories 755), so the runtime user cannot rewrite the application.
COPY --from=build --chown=root:root /app /app
USER node
# PORT is set per component; the check asks the process itself, so a wedged event loop fails it.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Node is PID 1 and handles SIGTERM itself (graceful shutdown in the platform); compose adds an init for zombies.
# Each start.js loads tracing first (services/platform/src/telemetry), so no --require is needed here.
CMD ["node", "gateway/dist/start.js"]
