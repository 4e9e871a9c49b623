import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors, isAppError, isDatabaseUnavailable } from '@agent-auth/errors';
import { noteRefusal } from './observability.js';
import { MAX_JSON_DEPTH, tooDeepPath, unpairedSurrogatePath } from '@agent-auth/contracts';

/**
 * Seconds a client is told to wait before retrying a 503 or 504 (a dependency restarting, or an answer that did not
 * come in time: a create retried with its key, or any other call, is safe): a restart of NATS or Postgres is over by
 * then.
 */
export const RETRY_AFTER_SECONDS = '1';

/** Maps anything thrown while serving a request to one AppError: the single place errors become HTTP. */
export function toHttpError(err: FastifyError | AppError | Error, bodyLimit: number): AppError {
  if (isAppError(err)) return err;
  switch ((err as FastifyError).code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType();
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.invalidContentLength();
    case 'FST_ERR_CTP_INVALID_TYPE':
      return errors.invalidContentType();
  }
  const status = (err as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) {
    return new AppError(status, errors.requestRefused.code, errors.requestRefused(err.message).detail);
  }
  if (isDatabaseUnavailable(err)) return errors.databaseUnavailable();
  return errors.internal();
}

/** Fastify options that make the router's and the HTTP parser's own errors answer {"code", "detail"} too. */
export const frameworkErrorOptions = {
  frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
    const refusal =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? errors.pathSegmentTooLong()
        : error.code === 'FST_ERR_BAD_URL'
          ? errors.invalidUrlEncoding()
          : errors.requestRefused('The request is not valid');
    void reply.code(refusal.status).send(refusal.toBody());
  },
  clientErrorHandler(error: NodeJS.ErrnoException, socket: import('node:net').Socket) {
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const refusal = tooLarge ? errors.headersTooLarge() : errors.malformedHttp();
    const reason = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
    const body = JSON.stringify(refusal.toBody());
    // A HEAD is answered with the headers the GET would have, and no body (RFC 9110 9.3.2).
    const head = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.end(
      `HTTP/1.1 ${refusal.status} ${reason}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  },
};

/**
 * A JSON body as the API takes it: empty is no body; malformed JSON, nesting deeper than the limit and unpaired
 * surrogates are refused (400) before anything recursive (validation, size checks, JSON.stringify) touches it.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw errors.malformedJson((e as Error).message);
  }
  const deep = tooDeepPath(parsed);
  if (deep !== null) throw errors.nestedTooDeeply(deep || 'body', MAX_JSON_DEPTH);
  const unpaired = unpairedSurrogatePath(text, parsed);
  if (unpaired !== null)
    throw errors.malformedJson(
      `${unpaired} holds an unpaired UTF-16 surrogate (a \\uD800-\\uDFFF escape without its other half), which is not Unicode text`,
    );
  return parsed;
}

/** Installs the JSON parser, the error mapper and the 404/405 answers, so every error body is {"code", "detail"}. */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  // JSON only: any other content type is a 415, not silently parsed as text.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as AppError, undefined);
    }
  });

  app.setErrorHandler((err, request, reply) => {
    // A route may take a larger body than the server's (a hook's tool input): its own limit is the one passed.
    const mapped = toHttpError(err as Error, request.routeOptions?.bodyLimit ?? bodyLimit);
    if (mapped.status >= 500) request.log.error({ reqId: request.id, err }, 'request failed');
    else noteRefusal(request, mapped.detail); // logged on the request's one access line
    // A dependency restarting (a service without a replica, NATS, Postgres) is back within moments: say when to retry.
    if ((mapped.status === 503 || mapped.status === 504) && !reply.hasHeader('retry-after'))
      void reply.header('retry-after', RETRY_AFTER_SECONDS);
    return reply.status(mapped.status).send(mapped.toBody());
  });

  const patterns: Array<{ method: string; regex: RegExp }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const regex = new RegExp(`^${route.url.replace(/:[^/]+/g, '[^/]+')}/?$`);
    for (const method of methods) patterns.push({ method, regex });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))].filter(
      (m) => m !== 'HEAD',
    );
    if (allowed.length) {
      const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
      // OPTIONS on any route: which methods it takes (RFC 9110 9.3.7).
      if (request.method === 'OPTIONS') return reply.status(204).header('allow', allow).send();
      void reply.header('allow', allow);
    }
    const refusal = allowed.length
      ? errors.methodNotAllowed(request.method, path, allowed)
      : errors.routeNotFound(request.method, path);
    return reply.status(refusal.status).send(refusal.toBody());
  });
}
