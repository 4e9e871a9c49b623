import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { errors } from '@agent-auth/errors';
import { installErrorHandling } from './http-errors.js';

describe('error answers', () => {
  it('tell a client refused with 503 or 504 (a service, NATS or Postgres restarting) when to retry, and no one else', async () => {
    const app = Fastify();
    installErrorHandling(app, 1024);
    app.get('/db', async () => {
      throw errors.databaseUnavailable();
    });
    app.get('/bus', async () => {
      throw errors.serviceUnavailable('actions');
    });
    app.get('/late', async () => {
      throw errors.serviceTimeout('actions');
    });
    app.get('/bug', async () => {
      throw new Error('a bug');
    });
    for (const [url, status] of [
      ['/db', 503],
      ['/bus', 503],
      ['/late', 504],
    ] as const) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(status);
      expect(res.headers['retry-after']).toBe('1');
    }
    const bug = await app.inject({ url: '/bug' });
    expect(bug.statusCode).toBe(500);
    expect(bug.headers['retry-after']).toBeUndefined();
    await app.close();
  });
});
