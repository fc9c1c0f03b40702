# syntax=docker/dockerfile:1
#
# meshinject container images (pushed by .github/workflows/release.yml, linux/amd64 + linux/arm64):
#   target `function`    ghcr.io/meshinject/meshinject:v<version>
#       the KRM function: a ResourceList on stdin, the mutated list on stdout. For `kpt fn eval --image`,
#       Kptfile `image:` steps and kustomize container transformers (which run it as
#       `docker run --rm -i --network none --user nobody ...`). No network, no writable file system needed.
#   target `argocd-cmp`  ghcr.io/meshinject/meshinject-argocd-cmp:v<version>
#       the same function plus kustomize and helm, as an Argo CD config management plugin sidecar (uid 999; see
#       examples/argocd/).
# `function` is the last stage, so a plain `docker build .` builds it.
#
# Base images are pinned by digest (the tag is for humans). The release workflow checks that each pinned
# digest still resolves to a linux/amd64 + linux/arm64 index before it builds; update both here.
# node:24-bookworm-slim: Node 24, the current LTS (Node 20 reached its end of life in April 2026), on Debian
# (bash and dash, which the Argo CD plugin scripts use). The release workflow's pin step checks the digest.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
# kustomize 5.8.1: the version Argo CD 3.x bundles; the official image has the static binary at /app/kustomize.
ARG KUSTOMIZE_IMAGE=registry.k8s.io/kustomize/kustomize:v5.8.1@sha256:899fcd3bc898160e62bcaf82932b0cb29ba38d16272353db2e7acbba82129429
# helm 3.17.3 for the plugin's Helm variant (static binary at /usr/bin/helm).
ARG HELM_IMAGE=alpine/helm:3.17.3@sha256:d899e6316789fec04ee95300a18e454b7942539cbb3d89bde3e0655d6ca2e895

# ---- build: generated modules, the bundle and its V8 code cache ----
# Not `--platform=$BUILDPLATFORM`: the V8 code cache (dist/meshinject.cjs.cache) is only accepted by the
# node binary that wrote it, so each target platform's build runs on that platform's node (emulated when
# cross-building), the same binary as the runtime stages below.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY schemas ./schemas
COPY src ./src
COPY bin ./bin
# npm ci runs the `prepare` build (scripts/build.mjs): templates and validators, dist/meshinject.cjs (every
# dependency bundled), then a warm-up run through bin/meshinject.js that writes dist/meshinject.cjs.cache.
RUN npm ci --no-audit --no-fund

FROM ${KUSTOMIZE_IMAGE} AS kustomize
FROM ${HELM_IMAGE} AS helm

# ---- runtime: node, the bundle, its code cache and the bin entry; nothing from node_modules ----
FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="meshinject" \
      org.opencontainers.image.description="Offline, mesh-agnostic sidecar injector: a KRM function" \
      org.opencontainers.image.source="https://github.com/meshinject/meshinject" \
      org.opencontainers.image.documentation="https://github.com/meshinject/meshinject/blob/main/functions/meshinject/README.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
WORKDIR /app
# bin/package.json makes bin/meshinject.js CommonJS; the cache must sit next to the bundle.
COPY --from=build /src/bin/meshinject.js /src/bin/package.json ./bin/
COPY --from=build /src/dist/meshinject.cjs /src/dist/meshinject.cjs.cache ./dist/
RUN ln -s /app/bin/meshinject.js /usr/local/bin/meshinject
ENV NODE_ENV=production

# ---- Argo CD config management plugin sidecar: meshinject + kustomize + helm, as uid 999 ----
FROM runtime AS argocd-cmp
LABEL org.opencontainers.image.title="meshinject-argocd-cmp" \
      org.opencontainers.image.description="meshinject, kustomize and helm for an Argo CD config management plugin sidecar"
COPY --from=kustomize /app/kustomize /usr/local/bin/kustomize
COPY --from=helm /usr/bin/helm /usr/local/bin/helm
# Argo CD runs plugin sidecars as uid 999 (runAsUser in the repo-server patch); HOME for kustomize/helm caches.
RUN useradd --uid 999 --user-group --home-dir /home/argocd --create-home argocd
ENV HOME=/home/argocd
USER 999
# argocd-cmp-server itself is mounted from the repo-server (/var/run/argocd); see examples/argocd/sidecar.
ENTRYPOINT ["/var/run/argocd/argocd-cmp-server"]

# ---- the KRM function (default target) ----
FROM runtime AS function
# 65534 is `nobody` in Debian; kpt and kustomize also pass --user nobody.
USER 65534:65534
ENTRYPOINT ["node", "/app/bin/meshinject.js"]
