import { AppError } from '../common/errors/app-error.js';
import type { SandboxProblem } from '../execution/process/sandbox/sandbox-probe.js';

// Not the caller's fault and not fixed by retrying soon: the operator has to act, and the message says how.
export const sandboxUnavailable = (problem: SandboxProblem) =>
  new AppError(503, 'sandbox_unavailable', `Commands cannot run on this service: ${problem.reason}. To fix: ${problem.fix}.`, {
    details: { reason: problem.reason, fix: problem.fix },
  });

export const sandboxUidsExhausted = (range: { first: number; last: number }) =>
  sandboxUnavailable({
    reason: `every uid of SANDBOX_UID_RANGE (${range.first}-${range.last}) is held by another tenant`,
    fix: 'widen SANDBOX_UID_RANGE',
  });
