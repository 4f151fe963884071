import { defineConfig } from 'prisma/config';

// The CLI is only used for `prisma generate`; migrations are applied by the service (npm run db:migrate).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
