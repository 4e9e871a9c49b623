// The machine's floor for latency: a bare fastify process that answers POST /actions from memory (no database, no
// validation beyond JSON parsing), so a paced run against it shows what this machine, its scheduler and the load
// generator alone add to a request's latency at a given rate (action-creation.ts).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/actions', async (request) => ({ id: 'act_floor', status: 'pending', ...(request.body as object) }));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ msg: 'floor listening', url: address })}\n`);
const stop = async () => {
  await app.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
