import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEVICE_APP_CSP, loadDeviceApp } from '@agent-auth/device-app';
import { errors } from '@agent-auth/errors';

export const DEVICE_APP_PATH = '/app/';

/** Serves the device web app (a fixed set of files held in memory) at /app/, with headers that keep it unframed. */
export function deviceAppRoutes(app: FastifyInstance): void {
  const files = loadDeviceApp();
  const send = (name: string) => {
    const file = files.get(name);
    if (!file) throw errors.fileNotFound(name);
    return file;
  };
  app.get('/', async (_request, reply) => reply.redirect(DEVICE_APP_PATH));
  // The router ignores trailing slashes, so /app and /app/ are one route; the page names its files absolutely.
  app.get<{ Params: { file?: string } }>('/app', serve);
  app.get<{ Params: { file?: string } }>('/app/:file', serve);
  async function serve(request: FastifyRequest<{ Params: { file?: string } }>, reply: FastifyReply) {
    const file = send(request.params.file || 'index.html');
    return reply
      .header('content-type', file.contentType)
      .header('content-security-policy', DEVICE_APP_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .send(file.body);
  }
}
