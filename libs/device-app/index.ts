import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderIcon } from './icons.js';

/** One file of the app as served: its bytes and content type. */
export interface AppFile {
  body: Buffer;
  contentType: string;
}

// The app is a fixed set of files, read once: nothing a request names is ever looked up on disk.
const JS = 'text/javascript; charset=utf-8';
const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': JS,
  'views.js': JS,
  'dom.js': JS,
  'tool-calls.js': JS,
  'tool-views.js': JS,
  'api.js': JS,
  'signing.js': JS,
  'passkeys.js': JS,
  'push.js': JS,
  'format.js': JS,
  'links.js': JS,
  'verify.js': JS,
  'history.js': JS,
  'connect.js': JS,
  'ciba-client.js': JS,
  'rule-words.js': JS,
  'rules-view.js': JS,
  'people.js': JS,
  'team-view.js': JS,
  'sw.js': JS,
  'style.css': 'text/css; charset=utf-8',
  'manifest.webmanifest': 'application/manifest+json; charset=utf-8',
};
/**
 * Files of the app's one dependency, served under their own name: the QR code of an invite's join link is drawn in
 * the browser (qrcode-generator, no dependencies of its own), so the app's CSP stays as it is.
 */
const VENDORED: Record<string, string> = { 'qrcode.js': 'qrcode-generator' };
/** The icons the manifest names, by file name and size in pixels. */
const ICONS: Record<string, number> = { 'icon-192.png': 192, 'icon-512.png': 512 };

/** The folder the app's files are in, whether this module runs from source or from dist/. */
export function deviceAppDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return join(basename(here) === 'dist' ? dirname(here) : here, 'public');
}

/** Every file of the device web app by name (its icons drawn once), loaded into memory for serving. */
export function loadDeviceApp(): Map<string, AppFile> {
  const dir = deviceAppDir();
  const files = new Map<string, AppFile>(
    Object.entries(FILES).map(([name, contentType]) => [name, { body: readFileSync(join(dir, name)), contentType }]),
  );
  for (const [name, specifier] of Object.entries(VENDORED))
    files.set(name, { body: readFileSync(fileURLToPath(import.meta.resolve(specifier))), contentType: JS });
  for (const [name, size] of Object.entries(ICONS))
    files.set(name, { body: renderIcon(size), contentType: 'image/png' });
  return files;
}

export { renderIcon } from './icons.js';

/**
 * The Content-Security-Policy of the app: its own scripts and styles only, API calls to its own origin only, no
 * framing (a framed approve button could be clickjacked); its manifest and service worker from its own origin.
 */
export const DEVICE_APP_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; manifest-src 'self'; " +
  "worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
