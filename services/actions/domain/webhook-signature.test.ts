import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret } from './credentials.js';
import { webhookSignature } from './webhook-signature.js';

describe('Standard Webhooks signature', () => {
  it('matches the published example (Svix / Standard Webhooks)', () => {
    const signature = webhookSignature(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('is verified by the standardwebhooks package for secrets as this service generates them, and refused when tampered', () => {
    for (let i = 0; i < 50; i++) {
      const secret = newWebhookSecret();
      const timestamp = Math.floor(Date.now() / 1000);
      const body = JSON.stringify({ id: `act_${i}`, status: 'approved', amount: 12.5 });
      const headers = {
        'webhook-id': `msg_${i}`,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': webhookSignature(secret, `msg_${i}`, timestamp, body),
      };
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
      expect(() => new Webhook(secret).verify(body.replace('12.5', '1250'), headers)).toThrow();
      expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    }
  });
});
