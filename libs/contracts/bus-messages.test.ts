import { describe, expect, it } from 'vitest';
import {
  AuditQuery,
  auditPageRequestOf,
  CreateCredentialBody,
  CreateDeviceBody,
  ListActionsQuery,
  listActionsRequestOf,
  newAccountOf,
  newCredentialOf,
  PushSubscriptionBody,
  pushSubscriptionRequestOf,
} from './index.js';

const device = { account_id: 'acc_1', device_ref: 'ref_1' };
const agent = { account_id: 'acc_1', agent_id: 'agt_1' };

// The gateway sends these maps of validated HTTP input; the services read them as they are, trusting the defaults.
describe('bus messages of HTTP input', () => {
  it('apply the HTTP defaults and give null for "not given"', () => {
    expect(newAccountOf(CreateDeviceBody.parse({}))).toEqual({ first_device: { name: null, public_key: null } });
    expect(listActionsRequestOf(agent, ListActionsQuery.parse({ status: 'pending' }))).toEqual({
      agent,
      limit: 50,
      status: 'pending',
      action_type: null,
      cursor: null,
    });
    expect(auditPageRequestOf(device, AuditQuery.parse({ limit: '3' }))).toEqual({ device, after: 0, limit: 3 });
    const credential = CreateCredentialBody.parse({
      service_name: 'github',
      credential_value: 'tok',
      allowed_hosts: ['api.github.com'],
    });
    expect(newCredentialOf(device, credential)).toEqual({
      device,
      service_name: 'github',
      credential_value: 'tok',
      auth_type: 'bearer',
      auth_header: 'Authorization',
      allowed_hosts: ['api.github.com'],
      description: null,
    });
  });

  it('carry no field of the HTTP body beyond the message', () => {
    const body = PushSubscriptionBody.parse({
      endpoint: 'https://push.example/abc',
      keys: { p256dh: 'AAAA', auth: 'BBBB' },
    });
    const message = pushSubscriptionRequestOf(device, { ...body, extra: 1 } as typeof body);
    expect(message).toEqual({ device, endpoint: 'https://push.example/abc', keys: { p256dh: 'AAAA', auth: 'BBBB' } });
  });
});
