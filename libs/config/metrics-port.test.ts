import { describe, expect, it } from 'vitest';
import { loadConfig, metricsPortOf } from './index.js';

describe('the port a service process serves GET /metrics on', () => {
  it('differs per service by default, so all of them run on one host', () => {
    const config = loadConfig({});
    const ports = ['actions', 'policy', 'vault-executor', 'notifier', 'identity'].map((name) =>
      metricsPortOf(config, name),
    );
    expect(ports).toEqual([9464, 9465, 9466, 9467, 9468]);
  });

  it('is METRICS_PORT when set, for every service', () => {
    const config = loadConfig({ METRICS_PORT: '9100' });
    expect(metricsPortOf(config, 'actions')).toBe(9100);
    expect(metricsPortOf(config, 'notifier')).toBe(9100);
    expect(metricsPortOf(loadConfig({ METRICS_PORT: '0' }), 'policy')).toBe(0);
  });

  it('is any free port for a process with no default of its own', () => {
    expect(metricsPortOf(loadConfig({}), 'a-new-service')).toBe(0);
  });
});
