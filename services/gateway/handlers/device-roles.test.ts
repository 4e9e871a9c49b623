import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessBus } from '@agent-auth/bus';
import { loadConfig } from '@agent-auth/config';
import { type DevicePrincipal, memberRoles } from '@agent-auth/contracts';
import { isAppError } from '@agent-auth/errors';
import { createGateway } from '../index.js';
import { admitRole, DEVICE_ROUTE_ROLES, deviceRouteKey } from './device-roles.js';

const as = (role: DevicePrincipal['role']): DevicePrincipal => ({
  account_id: 'acc_1',
  device_ref: 'dvc_1',
  member_id: 'mem_1',
  role,
});

describe('the roles of the device routes', () => {
  let app: Awaited<ReturnType<typeof createGateway>>;
  let deviceRoutes: string[];

  beforeAll(async () => {
    const bus = createInProcessBus({ prefix: 'roles', timeoutMs: 100 });
    app = await createGateway({
      bus,
      config: { ...loadConfig({}), RATE_LIMITS: false },
      log: pino({ level: 'silent' }),
    });
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    deviceRoutes = Object.entries(doc.paths as Record<string, Record<string, { security: unknown }>>).flatMap(
      ([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => JSON.stringify(op.security).includes('deviceId'))
          .map(([method]) => `${method.toUpperCase()} ${path.replace(/\{([a-z_]+)\}/g, ':$1')}`),
    );
  });
  afterAll(async () => app?.close());

  it('decides every device route the gateway serves, and no route it does not', () => {
    expect(deviceRoutes.length).toBeGreaterThan(40);
    expect(deviceRoutes.filter((r) => !(r in DEVICE_ROUTE_ROLES))).toEqual([]);
    expect(Object.keys(DEVICE_ROUTE_ROLES).filter((r) => !deviceRoutes.includes(r))).toEqual([]);
  });

  it('lets owners and admins manage, approvers answer, auditors read the audit trail', () => {
    const may = (role: DevicePrincipal['role'], key: string) => {
      try {
        admitRole(as(role), { key });
        return true;
      } catch (err) {
        if (isAppError(err) && err.code === 'role_forbidden') return false;
        throw err;
      }
    };
    for (const key of Object.keys(DEVICE_ROUTE_ROLES)) {
      expect(may('owner', key), key).toBe(true);
      expect(may('admin', key), key).toBe(true);
    }
    expect(may('approver', 'POST /actions/:request_id/approve')).toBe(true);
    expect(may('approver', 'POST /rules')).toBe(false);
    expect(may('approver', 'GET /audit')).toBe(false);
    expect(may('auditor', 'GET /audit')).toBe(true);
    expect(may('auditor', 'POST /actions/:request_id/deny')).toBe(false);
    expect(may('auditor', 'GET /pending')).toBe(false);
    // An auditor changes nothing but the set of their own devices, and answers nothing.
    const auditorWrites = Object.keys(DEVICE_ROUTE_ROLES).filter((k) => !k.startsWith('GET ') && may('auditor', k));
    expect(auditorWrites).toEqual(['POST /devices']);
    for (const role of memberRoles) expect(may(role, 'GET /not-in-the-table')).toBe(false);
  });

  it('says in the 403 which role lacks what, and which roles may', () => {
    let refusal: unknown;
    try {
      admitRole(as('auditor'), { key: 'POST /rules', summary: 'Create a rule' });
    } catch (err) {
      refusal = err;
    }
    expect(isAppError(refusal) && refusal.toBody()).toEqual({
      code: 'role_forbidden',
      detail: 'A member with the auditor role may not create a rule (POST /rules): it takes the owner or admin role',
    });
  });

  it('keys a route by its declared path without the prefix, HEAD as its GET', () => {
    expect(deviceRouteKey('HEAD', '/api/v1/audit/head', '/api/v1')).toBe('GET /audit/head');
    expect(deviceRouteKey('DELETE', '/api/v1/members/:member_id', '/api/v1')).toBe('DELETE /members/:member_id');
  });
});
