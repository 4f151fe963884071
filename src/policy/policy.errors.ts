import { AppError, notFound, unprocessable } from '../common/errors/app-error.js';

// Where in the submitted text Cedar found a problem: character offsets and the 1-based line and column.
export interface PolicyProblem {
  message: string;
  help: string | null;
  policyId: string | null;
  position: { start: number; end: number; line: number; column: number } | null;
}

export const policyInvalid = (problems: PolicyProblem[]) =>
  unprocessable(
    'policy_invalid',
    `The policy set was refused (the one in force is unchanged): ${problems[0]?.message ?? 'invalid'}${problems[0]?.position ? ` at line ${problems[0].position.line}, column ${problems[0].position.column}` : ''}`,
    { problems },
  );

export const policyNotSet = (scope: 'tenant' | 'project') => notFound('policy_not_set', `No policy set has been set for this ${scope}`);

// A determining policy, as a refusal and the audit name it.
export interface DeterminingPolicy {
  id: string;
  scope: 'tenant' | 'project';
  reason: string | null;
}

// The model reads this: which policy refused the call and why, so it can choose another way.
export const forbiddenByPolicy = (policies: readonly DeterminingPolicy[]) => {
  const named = policies.map((p) => `"${p.id}"${p.reason ? ` (${p.reason})` : ''}`).join(', ');
  return new AppError(403, 'forbidden_by_policy', `This call is forbidden by policy ${named}; do not retry it as it is`, {
    details: { policies: policies.map((p) => ({ id: p.id, scope: p.scope, reason: p.reason })) },
  });
};

export const policyCheckToolNotFound = (tool: string) => notFound('tool_not_found', `No tool named '${tool}' in this project`);
