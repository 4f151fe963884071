import { forbidden, AppError, badRequest, conflict, notFound, unprocessable } from '../common/errors/app-error.js';

// Batches
export const invalidBatch = (message: string) => badRequest('invalid_batch', message);
export const emptyBatch = (max: number) => badRequest('empty_batch', `The batch has no calls: send 1 to ${max} calls`);
export const batchTooLarge = (calls: number, max: number) =>
  badRequest('batch_too_large', `The batch has ${calls} calls; at most ${max} run in one request: split it`, { max });
export const duplicateCallId = (id: string) =>
  badRequest('duplicate_call_id', `Call id '${id}' appears more than once: each call needs its own id`);

// Idempotency keys
export const invalidIdempotencyKey = (message: string) => badRequest('invalid_idempotency_key', message);
export const idempotencyKeyReused = () =>
  unprocessable(
    'idempotency_key_reused',
    'This Idempotency-Key was already used for a different call (another tool, arguments or timeoutMs); use a new key for a new call',
  );
export const idempotencyInProgress = () =>
  new AppError(
    409,
    'idempotency_in_progress',
    'A request with this Idempotency-Key is still running; retry shortly with the same key to get its answer',
    {
      headers: { 'Retry-After': '1' },
    },
  );

// Approvals
export const approvalNotFound = (invocationId: string) =>
  notFound('approval_not_found', `No call awaiting approval with id '${invocationId}' in this project`);
export const approvalExpired = (timeoutMs: number) =>
  conflict('approval_expired', `This call was not decided within ${timeoutMs} ms and expired; it never ran`, { status: 'expired' });
export const approvalAlreadyDecided = (status: 'approved' | 'denied') =>
  conflict('approval_already_decided', `This call was already decided (${status}); a decision is taken once`, { status });

export const approvalRequesterEnded = () =>
  conflict(
    'approval_requester_ended',
    'The key that made this call was revoked or has expired since, or the OAuth consent its token was issued under ended: the call was denied instead of run',
    { status: 'denied' },
  );

export const approvalSelfDecision = () =>
  forbidden(
    'approval_self_decision',
    'The key that made this call, or that signed in the OAuth client whose token made it, cannot decide it: a different person or key (admin or approver) must approve or deny it.',
  );

// The approver named the arguments they saw (argumentsDigest); the parked call holds others.
export const approvalArgumentsChanged = (expected: string) =>
  conflict(
    'approval_arguments_changed',
    'The arguments of this call are not the ones the given argumentsDigest names; nothing ran. Read the call again and decide on what it will run.',
    {
      argumentsDigest: expected,
    },
  );
