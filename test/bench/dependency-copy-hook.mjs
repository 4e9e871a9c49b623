// Loads one dependency from a copy of it elsewhere instead of node_modules, in a process started with
// `--import <this file>` and DEPENDENCY_COPY=<package name>=<the copy's package folder> (e.g.
// postgres=/tmp/x/node_modules/postgres): the bench compares a patched dependency with the same copy unpatched
// (dependency-patches.ts). Both an `import` (a module-resolution hook) and a `require()` (which the hook does not see
// in Node 20) of the package or a path in it are sent to the copy; what the copy itself imports by name resolves as
// it would from the package's place in node_modules. Says once on stderr where the package was loaded from.
import { existsSync } from 'node:fs';
import Module, { register } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';

const [name, copy] = (process.env.DEPENDENCY_COPY ?? '').split('=');
if (!name || !copy) throw new Error('DEPENDENCY_COPY must be <package name>=<folder of the copy>');

// A file beside the node_modules folder that holds the copy, and one inside the package's own place in node_modules:
// resolving a name "from" them finds the copy, or what the package would find.
const beside = join(copy, ...name.split('/').map(() => '..'), '..', 'resolve-from.js');
const installed = Module._nodeModulePaths(process.cwd())
  .map((folder) => join(folder, name))
  .find((folder) => existsSync(join(folder, 'package.json')));
if (!installed) throw new Error(`${name} is not installed under ${process.cwd()}`);
const original = join(installed, 'resolve-from.js');
const isBare = (specifier) => !/^(\.|\/|node:|file:|data:)/.test(specifier);
const isThePackage = (specifier) => specifier === name || specifier.startsWith(`${name}/`);

let said = false;
const say = () => {
  if (said) return;
  said = true;
  process.stderr.write(`dependency-copy-hook: ${name} loaded from ${copy}\n`);
};

// The hooks run off the main thread: they tell it through a port when they send an import to the copy.
const { port1, port2 } = new MessageChannel();
port1.on('message', say);
port1.unref();
register(
  `data:text/javascript,${encodeURIComponent(`
    let name, copyUrl, besideUrl, originalUrl, port;
    export function initialize(data) { ({ name, copyUrl, besideUrl, originalUrl, port } = data); }
    const isBare = (s) => !/^(\\.|\\/|node:|file:|data:)/.test(s);
    export function resolve(specifier, context, next) {
      if (specifier === name || specifier.startsWith(name + '/')) {
        port.postMessage('redirected');
        return next(specifier, { ...context, parentURL: besideUrl });
      }
      if (context.parentURL?.startsWith(copyUrl) && isBare(specifier)) return next(specifier, { ...context, parentURL: originalUrl });
      return next(specifier, context);
    }
  `)}`,
  {
    data: {
      name,
      copyUrl: pathToFileURL(copy + sep).href,
      besideUrl: pathToFileURL(beside).href,
      originalUrl: pathToFileURL(original).href,
      port: port2,
    },
    transferList: [port2],
  },
);

const fakeParent = (file) => ({ id: file, filename: file, paths: Module._nodeModulePaths(dirname(file)) });
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, isMain, options) {
  if (isThePackage(request)) {
    say();
    return resolveFilename.call(this, request, fakeParent(beside), isMain, options);
  }
  if (parent?.filename?.startsWith(copy + sep) && isBare(request)) {
    return resolveFilename.call(this, request, fakeParent(original), isMain, options);
  }
  return resolveFilename.call(this, request, parent, isMain, options);
};
