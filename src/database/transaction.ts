import type { Prisma } from '../generated/prisma/client.js';

// The client a piece of work runs on inside an interactive transaction. Named here, below the repositories,
// so that code which only hands one along (a registered reader, a callback) need not import the repository
// that opened the transaction.
export type Tx = Prisma.TransactionClient;
