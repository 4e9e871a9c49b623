import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  configureMetrics,
  METRICS_CONTENT_TYPE,
  metricsText,
  recordBusHandled,
  recordBusRequest,
  recordHttpRequest,
} from '@agent-auth/metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketsOf, describeStageShares, shareOver, stageProbe } from './stage-shares.js';

// The real metrics registry of the services, served on loopback as a service's /metrics is.
let server: Server;
let metricsUrl: string;
beforeAll(async () => {
  configureMetrics({ enabled: true });
  server = createServer((_req, res) => {
    void metricsText().then((text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(text));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  metricsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const stages = () => [
  {
    name: 'gateway',
    metricsUrl,
    metric: 'agent_auth_http_request_duration_seconds',
    series: { method: 'POST', route: '/api/v1/actions' },
  },
  {
    name: 'round trip',
    metricsUrl,
    metric: 'agent_auth_bus_request_duration_seconds',
    series: { subject: 'actions.create' },
  },
  {
    name: 'handler',
    metricsUrl,
    metric: 'agent_auth_bus_handled_duration_seconds',
    series: { subject: 'actions.create' },
  },
];

describe('stage shares', () => {
  it('counts, per stage, the creates observed between two readings and the share over the bound', async () => {
    recordHttpRequest('POST', '/api/v1/actions', 201, 0.5); // before the probe: not counted
    const probe = stageProbe(stages(), 0.01);
    await probe.start();
    for (const seconds of [0.002, 0.004, 0.008, 0.03]) recordHttpRequest('POST', '/api/v1/actions', 201, seconds);
    recordHttpRequest('POST', '/api/v1/actions', 429, 0.2); // a refusal is not a create
    recordHttpRequest('GET', '/api/v1/actions/:id', 200, 0.2); // another route
    recordHttpRequest('GET', '/api/v1/actions', 200, 0.2); // the list, on the same route
    for (const seconds of [0.002, 0.02]) recordBusRequest('actions.create', 'ok', seconds);
    recordBusRequest('actions.create_account', 'ok', 0.5);
    recordBusHandled('actions.create', 'ok', 0.003);
    const shares = await probe.stop();
    expect(shares).toEqual([
      { name: 'gateway', count: 4, share: 0.25 },
      { name: 'round trip', count: 2, share: 0.5 },
      { name: 'handler', count: 1, share: 0 },
    ]);
    expect(describeStageShares(shares)).toBe('gateway 25.0 %, round trip 50.0 %, handler 0.0 %');
  });

  it('refuses a bound that is not one of the histogram buckets', async () => {
    const text = await metricsText();
    const buckets = bucketsOf(text, 'agent_auth_bus_request_duration_seconds', { subject: 'actions.create' });
    expect(buckets.get(Number.POSITIVE_INFINITY)).toBeGreaterThan(0);
    expect(() => shareOver(buckets, buckets, 0.007)).toThrow(/no bucket bound at 0.007 s/);
  });

  it('answers nothing, rather than failing the run, when a process serves no such histogram or no metrics', async () => {
    const absent = stageProbe([{ ...stages()[0]!, metric: 'agent_auth_no_such_duration_seconds' }], 0.01);
    await absent.start();
    expect(await absent.stop()).toEqual([]);
    const unreachable = stageProbe([{ ...stages()[0]!, metricsUrl: 'http://127.0.0.1:9/metrics' }], 0.01);
    await unreachable.start();
    expect(await unreachable.stop()).toEqual([]);
    expect(describeStageShares([])).toBe('unknown');
    expect(describeStageShares(undefined)).toBe('unknown');
  });
});
