#!/bin/sh
# Stand-in for Prisma's native schema engine, which `prisma generate` asks for but never runs.
# Migrations are applied by the service's own migrator, so nothing here needs the real engine.
echo "schema-engine stub: migrations are applied by 'npm run db:migrate', not by the Prisma CLI" >&2
exit 1
