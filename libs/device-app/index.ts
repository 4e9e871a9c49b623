import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the app as served: its bytes and content type. */
export interface AppFile {
  body: Buffer;
  contentType: string;
}

// The app is a fixed set of files, read once: nothing a request names is ever looked up on disk.
const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'signing.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};

/** The folder the app's files are in, whether this module runs from source or from dist/. */
export function deviceAppDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return join(basename(here) === 'dist' ? dirname(here) : here, 'public');
}

/** Every file of the device web app by name, loaded into memory for serving. */
export function loadDeviceApp(): Map<string, AppFile> {
  const dir = deviceAppDir();
  return new Map(Object.entries(FILES).map(([name, contentType]) => [name, { body: readFileSync(join(dir, name)), contentType }]));
}

/**
 * The Content-Security-Policy of the app: its own scripts and styles only, API calls to its own origin only, no
 * framing (a framed approve button could be clickjacked).
 */
export const DEVICE_APP_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
