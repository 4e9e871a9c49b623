import type { FastifyInstance } from 'fastify';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';

export const DOCS_PATH = '/docs';

// The one <style> element Swagger UI's bundle inserts, allowed by its hash rather than by 'unsafe-inline'.
const SWAGGER_UI_STYLE = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';
// The top bar (a URL box for loading other documents, and the framework's logo) is of no use here.
const THEME_CSS = '.swagger-ui .topbar { display: none; }\n';

// Everything the page loads comes from the gateway itself (the Swagger UI files are in the package, no CDN):
// own scripts and styles only, the document fetched from the same origin, nothing inline, no framing.
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' '${SWAGGER_UI_STYLE}'`,
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The API reference at /docs (Swagger UI, served from the package's own files) rendered from the OpenAPI
 * document; register it after every API route, since the document is complete only then.
 */
export async function apiReferenceRoutes(app: FastifyInstance, document: () => unknown): Promise<void> {
  await app.register(fastifySwagger, { mode: 'static', specification: { document: document() as never } });
  await app.register(fastifySwaggerUi, {
    routePrefix: DOCS_PATH,
    staticCSP: DOCS_CSP,
    uiConfig: { deepLinking: true, tryItOutEnabled: false, validatorUrl: null },
    theme: {
      title: 'Agent action authorization service: API reference',
      css: [{ filename: 'theme.css', content: THEME_CSS }],
    },
    uiHooks: {
      onRequest: async (_request, reply) => {
        void reply
          .header('x-content-type-options', 'nosniff')
          .header('x-frame-options', 'DENY')
          .header('referrer-policy', 'no-referrer');
      },
    },
  });
}
