import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MemberRole, memberRoles } from '@agent-auth/contracts';
import { DEVICE_ROUTE_ROLES } from '../../services/gateway/handlers/device-roles.js';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { inviteAndJoin } from '../harness/members.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

// Every device route of the OpenAPI document, called by a device of every role on a real stack: a role the roles
// table allows is never refused for its role, any other gets 403 role_forbidden naming the role. The routes come
// from the document the gateway serves, so a new device route the table does not decide fails here.
const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'all-in-one', skip: false },
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
];

interface DeviceRoute {
  method: string;
  path: string;
  /** The table's key: the path as the route is declared. */
  key: string;
}

/** The device routes of an OpenAPI document (security scheme deviceId). */
function deviceRoutes(doc: { paths: Record<string, Record<string, { security?: unknown }>> }): DeviceRoute[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => JSON.stringify(op.security ?? []).includes('deviceId'))
      .map(([method]) => ({
        method: method.toUpperCase(),
        path,
        key: `${method.toUpperCase()} ${path.replace(/\{([a-z_]+)\}/g, ':$1')}`,
      })),
  );
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`roles × device routes (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let routes: DeviceRoute[];
    const devices = new Map<MemberRole, string>();

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'roles-matrix' });
      api = apiClient(stack.baseUrl);
      routes = deviceRoutes((await api.call('GET', '/openapi.json')).body);
      const acct = await api.newAccount();
      devices.set('owner', acct.device_id);
      for (const role of memberRoles.filter((r) => r !== 'owner'))
        devices.set(role, (await inviteAndJoin(api, acct.device_id, { name: `the ${role}`, role })).device_id);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    /**
     * One call of a route by a device: path ids that name nothing of the account, an empty JSON body, so that an
     * allowed call changes nothing that matters (404, 400) and a refused one is refused before anything is read. A
     * stream is let go once its status is known.
     */
    const callAs = async (route: DeviceRoute, role: MemberRole) => {
      const url = stack.baseUrl + route.path.replace(/\{[a-z_]+\}/g, 'x_matrix_unknown');
      const withBody = route.method !== 'GET' && route.method !== 'DELETE';
      const abort = new AbortController();
      const res = await fetch(url, {
        method: route.method,
        headers: { 'x-device-id': devices.get(role)!, ...(withBody ? { 'content-type': 'application/json' } : {}) },
        body: withBody ? '{}' : undefined,
        signal: abort.signal,
      });
      const streaming = res.headers.get('content-type')?.startsWith('text/event-stream');
      const body = streaming ? undefined : await res.json().catch(() => undefined);
      abort.abort();
      return { status: res.status, body: body as { code?: string; detail?: string } | undefined };
    };

    it('takes every device route of the OpenAPI document from the roles table', () => {
      expect(routes.length).toBeGreaterThan(40);
      const undecided = routes.filter((r) => DEVICE_ROUTE_ROLES[r.key] === undefined).map((r) => r.key);
      expect(undecided, 'device routes without a decision in services/gateway/handlers/device-roles.ts').toEqual([]);
    });

    it('answers each role as the table decides: allowed is never 403, refused is 403 role_forbidden', async () => {
      const matrix: Record<string, Record<MemberRole, number>> = {};
      const wrong: string[] = [];
      for (const route of routes) {
        const allowed = DEVICE_ROUTE_ROLES[route.key] ?? [];
        matrix[route.key] = {} as Record<MemberRole, number>;
        for (const role of memberRoles) {
          const { status, body } = await callAs(route, role);
          matrix[route.key]![role] = status;
          if (allowed.includes(role)) {
            if (status === 403 || status === 401)
              wrong.push(`${role} ${route.key}: allowed, got ${status} ${body?.code}`);
          } else if (status !== 403 || body?.code !== 'role_forbidden' || !body.detail?.includes(`${role} role`)) {
            wrong.push(`${role} ${route.key}: refused, got ${status} ${JSON.stringify(body)}`);
          }
        }
      }
      expect(wrong).toEqual([]);
      // Owners and admins reach every device route; auditors change nothing but their own devices.
      for (const [key, answers] of Object.entries(matrix)) {
        expect(answers.owner, key).not.toBe(403);
        expect(answers.admin, key).not.toBe(403);
        if (!key.startsWith('GET ') && key !== 'POST /devices') expect(answers.auditor, key).toBe(403);
      }
    });
  });
}
