# syntax=docker/dockerfile:1
# sparql-guard: build with the dev dependencies, run with the production dependencies and the built output only.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npx tsc -p tsconfig.json

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# The npm cache stays in BuildKit's cache mount, out of the image.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
COPY rules ./rules
COPY policies ./policies
# The query page's own files (YASGUI itself comes with the production dependencies).
COPY ui ./ui
COPY --from=build /app/dist/src ./dist/src
# Configuration and policies come from a mounted folder; PORT overrides the config's port, so the probes below know it.
ENV GUARD_CONFIG=/etc/sparql-guard/guard.json PORT=8080
EXPOSE 8080 9464
# The image's own user (uid 1000), never root. The guard writes nothing to disk unless audit.file
# names a file: mount a folder the node user may write for it.
USER node
# The probe asks 127.0.0.1: leave host at 0.0.0.0 (or ::) in a container, as the default is.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node directly, not npm: SIGTERM reaches the guard, which drains and exits on its own.
CMD ["node", "dist/src/cli.js", "serve"]
