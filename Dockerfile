# Container image for kustomize container functions and kpt `image:` steps.
# The function reads a ResourceList on stdin and runs as user nobody with no network, as runners require.
FROM node:20-alpine AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY schemas ./schemas
COPY src ./src
COPY bin ./bin
# npm ci runs the `prepare` build: generated modules, the bundle, and its V8 code cache (made by this node).
RUN npm ci --no-audit --no-fund

FROM node:20-alpine
WORKDIR /app
COPY --from=build /src/dist ./dist
COPY bin ./bin
COPY package.json ./
USER nobody
ENTRYPOINT ["node", "/app/bin/meshinject.js"]
