import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { enableTracing, shutdownTracing } from '../../../src/common/tracing/tracer.js';
import { DATABASE_DRIVER, type DatabaseDriver } from '../../../src/database/database-driver.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';

// The SDK as src/tracing/start-tracing.ts sets it up (provider, AsyncLocalStorage context, W3C
// propagator), with an in-memory exporter instead of OTLP so the test reads the spans.
describe('traces of a tool call', () => {
  const exporter = new InMemorySpanExporter();
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;

  beforeAll(async () => {
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    enableTracing(() => provider.shutdown());
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    await writeFile(path.join(t.workspaceOf(projectId), 'notes.txt'), 'one\ntwo\n');
  });
  afterAll(async () => {
    await t.close();
    await shutdownTracing();
  });
  beforeEach(() => exporter.reset());

  const traceIdOfRow = async (invocationId: string): Promise<string | null> => {
    await t.http.get(`/v1/projects/${projectId}/invocations/${invocationId}`).set(tenant.auth).expect(200); // waits for the row
    const rows = await t.app
      .get<DatabaseDriver>(DATABASE_DRIVER)
      .query<{ trace_id: string | null }>('SELECT trace_id FROM invocations WHERE id = $1', [invocationId]);
    return rows[0].trace_id;
  };
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const requestSpanOf = (spans: ReadableSpan[], route: string) => {
    const found = spans.filter((s) => s.kind === SpanKind.SERVER && s.name === route);
    expect(found).toHaveLength(1);
    return found[0];
  };

  it('gives one request span with validation, execution and the audit write under it, and the trace id lands in the audit row and the logs', async () => {
    const res = await t.http
      .post(`/v1/projects/${projectId}/tools/read_file/invoke`)
      .set(tenant.auth)
      .send({ arguments: { path: 'notes.txt' } })
      .expect(200);
    expect(res.body.status).toBe('ok');
    const spans = exporter.getFinishedSpans();
    const request = requestSpanOf(spans, 'POST /v1/projects/:projectId/tools/:toolName/invoke');
    const traceId = request.spanContext().traceId;
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/projects/:projectId/tools/:toolName/invoke',
      'http.response.status_code': 200,
    });

    const ofCall = spans.filter((s) => s.spanContext().traceId === traceId && s !== request);
    expect(
      ofCall
        .map((s) => ({ name: s.name, parent: parentOf(s) === request.spanContext().spanId }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual([
      { name: 'toolgate.audit', parent: true },
      { name: 'toolgate.execute', parent: true },
      { name: 'toolgate.validate', parent: true },
    ]);
    const byName = Object.fromEntries(ofCall.map((s) => [s.name, s]));
    expect(byName['toolgate.validate'].attributes).toEqual({ 'toolgate.tool': 'read_file', 'toolgate.channel': 'rest' });
    expect(byName['toolgate.audit'].attributes).toEqual({ 'toolgate.tool': 'read_file', 'toolgate.status': 'ok' });
    // In order: validation ends before execution starts, the audit write comes after both (the SDK's
    // span times are anchored on Date.now(), so they are compared to the millisecond).
    const start = (s: ReadableSpan) => BigInt(s.startTime[0]) * 1_000_000_000n + BigInt(s.startTime[1]);
    const end = (s: ReadableSpan) => BigInt(s.endTime[0]) * 1_000_000_000n + BigInt(s.endTime[1]);
    const ms = 1_000_000n;
    expect(end(byName['toolgate.validate']) / ms).toBeLessThanOrEqual(start(byName['toolgate.execute']) / ms + 1n);
    expect(end(byName['toolgate.execute']) / ms).toBeLessThanOrEqual(start(byName['toolgate.audit']) / ms + 1n);

    expect(await traceIdOfRow(res.body.invocationId)).toBe(traceId);
    expect(
      t.logs.some((line) => line.msg === 'request' && line.traceId === traceId && line.requestId === res.headers['x-request-id']),
    ).toBe(true);
  });

  it('continues the trace of a caller that sends traceparent', async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await t.http
      .post(`/v1/projects/${projectId}/tools/read_file/invoke`)
      .set(tenant.auth)
      .set('traceparent', `00-${callerTrace}-00f067aa0ba902b7-01`)
      .send({ arguments: { path: 'notes.txt' } })
      .expect(200);
    const request = requestSpanOf(exporter.getFinishedSpans(), 'POST /v1/projects/:projectId/tools/:toolName/invoke');
    expect(request.spanContext().traceId).toBe(callerTrace);
    expect(parentOf(request)).toBe('00f067aa0ba902b7');
    expect(await traceIdOfRow(res.body.invocationId)).toBe(callerTrace);
  });

  it('records a refused call: the validation span fails and the audit row written under it has the trace id', async () => {
    const res = await t.http
      .post(`/v1/projects/${projectId}/tools/read_file/invoke`)
      .set(tenant.auth)
      .send({ arguments: { path: 5 } })
      .expect(422);
    const spans = exporter.getFinishedSpans();
    const request = requestSpanOf(spans, 'POST /v1/projects/:projectId/tools/:toolName/invoke');
    const validate = spans.find((s) => s.name === 'toolgate.validate')!;
    expect(parentOf(validate)).toBe(request.spanContext().spanId);
    expect(validate.status.code).toBe(2); // SpanStatusCode.ERROR
    const audit = spans.find((s) => s.name === 'toolgate.audit')!;
    expect(parentOf(audit)).toBe(validate.spanContext().spanId);
    expect(spans.some((s) => s.name === 'toolgate.execute')).toBe(false);
    expect(res.body.error.code).toBe('invalid_arguments');
    await t.http.get(`/v1/projects/${projectId}/invocations`).set(tenant.auth).expect(200); // waits for the row
    const rows = await t.app
      .get<DatabaseDriver>(DATABASE_DRIVER)
      .query<{ trace_id: string | null }>(`SELECT trace_id FROM invocations WHERE project_id = $1 AND status = 'invalid_arguments'`, [
        projectId,
      ]);
    expect(rows.map((r) => r.trace_id)).toEqual([request.spanContext().traceId]);
  });
});

describe('audit rows with tracing off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('have no trace id, and log lines carry none', async () => {
    const tenant = await t.createTenant();
    const projectId = (await t.createProject(tenant)).id;
    const res = await t.http.post(`/v1/projects/${projectId}/tools/list_files/invoke`).set(tenant.auth).send({ arguments: {} }).expect(200);
    await t.http.get(`/v1/projects/${projectId}/invocations`).set(tenant.auth).expect(200);
    const rows = await t.app
      .get<DatabaseDriver>(DATABASE_DRIVER)
      .query<{ trace_id: string | null }>('SELECT trace_id FROM invocations WHERE id = $1', [res.body.invocationId]);
    expect(rows).toEqual([{ trace_id: null }]);
    expect(t.logs.filter((line) => 'traceId' in line)).toEqual([]);
  });
});
