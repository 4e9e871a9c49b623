// The bench's yardstick: what one bare Node process does with POST /actions on this machine and this Postgres —
// fastify, the same zod contract, one insert of the request, the row's fields returned. No auth, bus, policy,
// audit or outbox: the ratios of the real service to this show what those cost.
import Fastify from 'fastify';
import postgres from 'postgres';
import { CreateActionBody, newId } from '@agent-auth/contracts';

const sql = postgres(process.env.DATABASE_URL!, { max: Number(process.env.DB_POOL_SIZE ?? 10), onnotice: () => {} });
await sql`create table if not exists reference_requests (
  id text primary key, agent_id text not null, action_type text not null, title text not null, description text,
  risk_level text not null, amount_cents bigint, currency text not null, metadata jsonb,
  status text not null default 'pending', created_at timestamptz not null default now())`;

const app = Fastify({ logger: false });
app.post('/actions', async (request, reply) => {
  const parsed = CreateActionBody.safeParse(request.body);
  if (!parsed.success) return reply.code(400).send({ detail: parsed.error.message });
  const body = parsed.data;
  const [row] = await sql`
    insert into reference_requests (id, agent_id, action_type, title, description, risk_level, amount_cents, currency, metadata)
    values (${newId('action')}, 'agt_reference', ${body.action_type}, ${body.title}, ${body.description ?? null},
      ${body.risk_level}, ${body.amount == null ? null : Math.round(body.amount * 100)}, ${body.currency},
      ${body.metadata ? sql.json(body.metadata as never) : null})
    returning *`;
  return { ...row, created_at: row!.created_at.toISOString() };
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ msg: 'reference listening', url: address })}\n`);
const stop = async () => {
  await app.close();
  await sql.end({ timeout: 2 });
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
