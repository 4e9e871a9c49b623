# syntax=docker/dockerfile:1.7
#
# One image for every service; the service is chosen per container with SERVICE
# (build-time default via --build-arg SERVICE=..., run-time override via -e SERVICE=...):
#
#   docker build -t agent-auth .
#   docker run -e SERVICE=actions -e NATS_URL=... -e DATABASE_URL=... -e ACTIONS_KEYS=... agent-auth
#
# SERVICE is a folder under services/ (gateway, actions, policy, vault-executor, notifier, identity,
# all-in-one); the container runs services/$SERVICE/dist/main.js.
# Nothing here names a package, so a new workspace needs no change to this file.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS base
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

# Only the lockfile, every workspace's package.json and the dependency patches (patches/, applied
# by the root package's postinstall), so the `npm ci` layers below are rebuilt only when
# dependencies change, not on every source edit.
FROM base AS manifests
COPY . /src
RUN mkdir /manifests \
 && cd /src \
 && cp package.json package-lock.json /manifests/ \
 && cp -R patches /manifests/ \
 && find libs services -mindepth 2 -maxdepth 2 -name package.json -exec cp --parents {} /manifests/ \;

# Full install (dev dependencies included: typescript, patch-package) and the build. `npm ci` runs
# the postinstall, which applies patches/ and fails the build when one no longer applies.
FROM base AS build
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.npm npm ci
COPY . .
RUN npx tsc -b
# Gather what a running service needs from each workspace: package.json (workspace links
# and "exports" resolve through it), dist/, store/migrations (read at run time from
# <package dir>/store/migrations) and public/ (the device web app's static files).
RUN mkdir /out \
 && for pkg in libs/* services/*; do \
      [ -f "$pkg/package.json" ] || continue; \
      mkdir -p "/out/$pkg"; \
      cp "$pkg/package.json" "/out/$pkg/"; \
      if [ -d "$pkg/dist" ]; then cp -R "$pkg/dist" "/out/$pkg/"; fi; \
      if [ -d "$pkg/store/migrations" ]; then mkdir -p "/out/$pkg/store" && cp -R "$pkg/store/migrations" "/out/$pkg/store/"; fi; \
      if [ -d "$pkg/public" ]; then cp -R "$pkg/public" "/out/$pkg/"; fi; \
    done \
 && find /out -name '*.tsbuildinfo' -delete \
 && test -n "$(ls /out/services/*/dist/main.js)"

# Production dependencies only (workspaces are linked into node_modules/@agent-auth/*). patch-package
# is a dev dependency, so the postinstall is skipped (no production dependency has install scripts)
# and the patches are applied with the build stage's patch-package, failing the build as above.
FROM base AS prod-deps
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts
RUN --mount=type=bind,from=build,source=/app/node_modules,target=/tools/node_modules \
    node /tools/node_modules/patch-package/index.js --error-on-fail --error-on-warn

FROM ${NODE_IMAGE} AS runtime
ARG SERVICE=gateway
ENV NODE_ENV=production \
    SERVICE=${SERVICE} \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app

# Starts services/$SERVICE/dist/main.js as PID 1's only child via exec (signals reach node,
# which shuts down in order on SIGTERM), or says which services this image has.
COPY --chmod=0755 <<'EOF' /usr/local/bin/run-service
#!/bin/sh
set -eu
main="/app/services/${SERVICE:?SERVICE must name a folder under services/}/dist/main.js"
if [ ! -f "$main" ]; then
  echo "SERVICE=${SERVICE}: no $main in this image; available: $(ls /app/services | tr '\n' ' ')" >&2
  exit 64
fi
# The same Node.js flags as `npm start` (package.json): see docs/capacity.md "Garbage collection".
exec node --initial-old-space-size=128 --no-allocation-site-pretenuring "$main" "$@"
EOF

# HTTP services (gateway, all-in-one) answer GET /healthz on PORT; the NATS workers have no
# HTTP port, and a live process is all there is to check (they exit when they cannot work).
COPY --chmod=0755 <<'EOF' /usr/local/bin/healthcheck
#!/bin/sh
case "${SERVICE:-}" in
  gateway|all-in-one)
    exec node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz',{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" ;;
  *) exit 0 ;;
esac
EOF

# Application files stay owned by root (read-only for the service); only DATA_DIR (/data, used
# by all-in-one for its embedded database and keys; mount a volume there to keep it) is writable.
COPY --from=prod-deps /app/ ./
COPY --from=build /out/ ./
RUN mkdir -p /data && chown 1000:1000 /data

# The image's `node` user, numeric so that Kubernetes runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/local/bin/healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/run-service"]
