import { Prisma } from '../generated/prisma/client.js';

// A write the database refused because a unique key (a tenant's name, a project's slug, a skill's name) is
// already taken. Repositories answer it as this value, so that services decide what it means without
// knowing Prisma's error codes.
export const UNIQUE_TAKEN = Symbol('unique key taken');
export type UniqueTaken = typeof UNIQUE_TAKEN;

export async function orUniqueTaken<T>(write: Promise<T>): Promise<T | UniqueTaken> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error)) return UNIQUE_TAKEN;
    throw error;
  }
}

const isUniqueViolation = (error: unknown): boolean => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
