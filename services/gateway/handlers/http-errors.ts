import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors, isAppError } from '@agent-auth/errors';

const BODY_LIMIT_TEXT = (limit: number) => `Request body is larger than the ${limit}-byte limit`;

/** Maps anything thrown while serving a request to one AppError: the single place errors become HTTP. */
function toHttpError(err: FastifyError | AppError | Error, bodyLimit: number): AppError {
  if (isAppError(err)) return err;
  const code = (err as FastifyError).code;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge(BODY_LIMIT_TEXT(bodyLimit));
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType('Unsupported Content-Type; send application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.badRequest('Content-Length does not match the body');
    case 'FST_ERR_CTP_INVALID_TYPE':
      return errors.badRequest('Content-Type header is invalid');
  }
  const status = (err as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) return new AppError(status, 'BAD_REQUEST', err.message);
  return errors.internal('Internal error');
}

/** Fastify options that make the router's and the HTTP parser's own errors answer {"detail": …} too. */
export const frameworkErrorOptions = {
  frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') void reply.code(414).send({ detail: 'A path segment is longer than 200 characters' });
    else if (error.code === 'FST_ERR_BAD_URL') void reply.code(400).send({ detail: 'The URL contains a segment that is not valid percent-encoding' });
    else void reply.code(400).send({ detail: 'The request is not valid' });
  },
  clientErrorHandler(error: NodeJS.ErrnoException, socket: import('node:net').Socket) {
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    const [status, text] = error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large'] : [400, 'Bad Request'];
    const body = JSON.stringify({ detail: status === 431 ? 'Request headers are too large' : 'Malformed HTTP request' });
    socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  },
};

/** Installs the JSON parser, the error mapper and the 404/405 answers, so every error body is {"detail": …}. */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  // JSON only: any other content type is a 415, not silently parsed as text.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(errors.badRequest(`Malformed JSON body: ${(e as Error).message}`), undefined);
    }
  });

  app.setErrorHandler((err, request, reply) => {
    const mapped = toHttpError(err as Error, bodyLimit);
    if (mapped.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ status: mapped.status, detail: mapped.detail }, 'request refused');
    return reply.status(mapped.status).send({ detail: mapped.detail });
  });

  const patterns: Array<{ method: string; regex: RegExp }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const regex = new RegExp('^' + route.url.replace(/:[^/]+/g, '[^/]+') + '/?$');
    for (const method of methods) patterns.push({ method, regex });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))].filter((m) => m !== 'HEAD');
    if (allowed.length) {
      return reply.status(405).header('allow', allowed.join(', ')).send({ detail: `Method ${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}` });
    }
    return reply.status(404).send({ detail: `No route ${request.method} ${path}` });
  });
}
