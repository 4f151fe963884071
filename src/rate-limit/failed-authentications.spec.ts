import type { AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { FailedAuthentications } from './failed-authentications.js';

const configOf = (authFailures: number, windowMs = 60_000) => ({ rateLimit: { authFailures, windowMs } }) as AppConfig;

async function refusalsCounted(metrics: Metrics): Promise<number> {
  const metric = await metrics.registry.getSingleMetric('toolgate_rate_limit_refusals_total')!.get();
  return metric.values.find((v) => v.labels.bucket === 'failed-authentication')?.value ?? 0;
}

describe('FailedAuthentications', () => {
  it('refuses an address from its limit-th 401 on, until its window ends, and no other address', async () => {
    const metrics = new Metrics();
    const failures = new FailedAuthentications(configOf(3, 1_000), metrics);
    failures.record('10.0.0.1');
    failures.record('10.0.0.1');
    expect(failures.someLimited()).toBe(false);
    expect(failures.refusal('10.0.0.1')).toBeNull();
    failures.record('::ffff:10.0.0.1');
    expect(failures.someLimited()).toBe(true);
    const refusal = failures.refusal('10.0.0.1');
    expect(refusal).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(refusal?.message).toBe('Too many requests refused for their credentials for this address: at most 3 per 1 s; retry after 1 s');
    expect(failures.refusal('10.0.0.2')).toBeNull();
    expect(await refusalsCounted(metrics)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    expect(failures.refusal('10.0.0.1')).toBeNull();
    expect(failures.someLimited()).toBe(false);
    // A new window counts from nothing.
    failures.record('10.0.0.1');
    expect(failures.refusal('10.0.0.1')).toBeNull();
  });

  it('counts an IPv6 client by its /64', () => {
    const failures = new FailedAuthentications(configOf(2), new Metrics());
    failures.record('2001:db8:1:2::10');
    failures.record('2001:db8:1:2:ffff::99');
    expect(failures.refusal('2001:db8:1:2::abcd')).not.toBeNull();
    expect(failures.refusal('2001:db8:1:3::10')).toBeNull();
  });

  it('counts nothing at 0', () => {
    const failures = new FailedAuthentications(configOf(0), new Metrics());
    for (let i = 0; i < 10; i++) failures.record('10.0.0.1');
    expect(failures.someLimited()).toBe(false);
    expect(failures.refusal('10.0.0.1')).toBeNull();
  });
});
