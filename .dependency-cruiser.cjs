/**
 * The folder rules of docs/architecture.md ("Services and their rooms"), checked by `npm run lint`. Type-only
 * imports count: a domain rule that names a store's row type depends on that store as much as one that calls it.
 */
const SERVICE = '^services/([^/]+)/';
const room = (name) => `${SERVICE}${name}/`;
/** A room of the same service as the importing file ($1 is the service the `from` path matched). */
const sameServiceRooms = (...names) => `^services/$1/(?:${names.join('|')})/`;
const WIRING = '^services/$1/(?:index|main)\\.ts$';
const TEST = '\\.test\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles: each file can be read after the files it imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      comment:
        'domain/ holds pure rules and the records they work on: it imports only its own domain/ and pure libs, ' +
        'never the rooms that do I/O or call it.',
      severity: 'error',
      from: { path: room('domain') },
      to: { path: [sameServiceRooms('store', 'adapters', 'use-cases', 'handlers', 'workers'), WIRING] },
    },
    {
      name: 'domain-uses-no-io-lib',
      comment: 'domain/ does no I/O: no database, bus, process, metrics, log or network library.',
      severity: 'error',
      from: { path: room('domain'), pathNot: TEST },
      to: { path: '^libs/(?:db|bus|lifecycle|metrics|logging|outbound|client|mcp-server|device-app)/' },
    },
    {
      name: 'store-calls-no-one',
      comment: 'store/ is SQL: it may use domain/ (the records it stores), never what sits above it.',
      severity: 'error',
      from: { path: room('store') },
      to: { path: [sameServiceRooms('adapters', 'use-cases', 'handlers', 'workers'), WIRING] },
    },
    {
      name: 'adapters-call-no-one',
      comment: 'adapters/ are the outside world as a use case sees it: they never call use cases, handlers or workers.',
      severity: 'error',
      from: { path: room('adapters') },
      to: { path: [sameServiceRooms('use-cases', 'handlers', 'workers'), WIRING] },
    },
    {
      name: 'use-cases-below-handlers',
      comment: 'use-cases/ are called by handlers and workers, never the other way round.',
      severity: 'error',
      from: { path: room('use-cases') },
      to: { path: [sameServiceRooms('handlers', 'workers'), WIRING] },
    },
    {
      name: 'use-cases-are-handed-their-stores',
      comment: 'A use case gets its stores from index.ts (createX(deps)): it names their types, never builds one.',
      severity: 'error',
      from: { path: room('use-cases'), pathNot: TEST },
      to: { path: sameServiceRooms('store'), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'handlers-go-through-use-cases',
      comment:
        'A handler calls a use case; it never calls a store, an adapter or a worker itself (it may name the type of ' +
        'one that index.ts hands it).',
      severity: 'error',
      from: { path: room('handlers'), pathNot: TEST },
      to: {
        path: [sameServiceRooms('store', 'adapters', 'workers', 'domain'), WIRING],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'workers-go-through-use-cases',
      comment: 'workers/ run use cases and read stores on a loop; they never call handlers or adapters.',
      severity: 'error',
      from: { path: room('workers') },
      to: { path: [sameServiceRooms('handlers', 'adapters'), WIRING] },
    },
    {
      name: 'services-stand-alone',
      comment:
        'A service never imports another: they talk over the bus, through the contracts in libs/contracts. Only ' +
        'the all-in-one process composes them.',
      severity: 'error',
      from: { path: SERVICE, pathNot: '^services/all-in-one/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'all-in-one-composes-through-index',
      comment: 'The all-in-one process starts each service as its own process would: through its index.ts.',
      severity: 'error',
      from: { path: '^services/all-in-one/' },
      to: { path: '^services/(?!all-in-one/)[^/]+/', pathNot: '^services/[^/]+/index\\.ts$' },
    },
    {
      name: 'libs-import-no-service',
      comment: 'libs/ are shared by the services and know none of them.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^services/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(?:^|/)(?:dist|node_modules)/' },
    tsPreCompilationDeps: true,
    // Its paths resolve `@agent-auth/*` to the workspaces' TypeScript sources rather than to their built dist/.
    tsConfig: { fileName: '.dependency-cruiser.tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts'],
    },
    skipAnalysisNotInRules: true,
  },
};
