FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
COPY scripts ./scripts
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# Every tenant command runs in a bubblewrap sandbox; without it commands are refused (503).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/* \
  && mkdir /workspaces && chown node:node /workspaces
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./
COPY prisma/migrations ./prisma/migrations
USER node
EXPOSE 3000
# The same Node flags as `npm start` (see docs/architecture.md, Resident memory).
CMD ["node", "--max-semi-space-size=4", "dist/main.js"]
