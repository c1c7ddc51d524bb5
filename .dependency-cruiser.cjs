// The layers of src/ (docs/architecture.md, "Layers"): each rule forbids imports that point the wrong way. Static,
// dynamic (`import('./x.ts')`) and type-only imports alike are dependencies. `npx depcruise src` checks them (npm run
// lint does), and test/project/layers.test.ts runs them and names each import that breaks one.
const COMPOSITION_ROOT = '^src/(localplane|cli|index)\\.ts$';
/** The domains: each a folder with its module, state, schemas and routes. */
const DOMAINS = '^src/(workspaces|tracing|objstore|destinations|bulk-exports|deployments|journal|warehouse|snapshots)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'shared-is-the-bottom',
      comment: 'src/shared/ imports nothing of src/ outside shared/ (node built-ins and npm packages only)',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'openapi-knows-no-domain',
      comment: 'src/openapi/ imports only shared/: the domains name their components and declare their routes with it',
      severity: 'error',
      from: { path: '^src/openapi/' },
      to: { path: '^src/', pathNot: '^src/(openapi|shared)/' },
    },
    {
      name: 'core-knows-no-domain',
      comment: 'core.ts imports shared/, config.ts and progress.ts only: the composition root hands it the fixtures',
      severity: 'error',
      from: { path: '^src/core\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(shared/|(config|progress)\\.ts$)' },
    },
    {
      name: 'helpers-know-no-domain',
      comment: 'config.ts and progress.ts import shared/ only',
      severity: 'error',
      from: { path: '^src/(config|progress)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'domains-below-the-fixture-files',
      comment:
        'the domains declare their fixture files and seed their own tables; fixtures/ reads the files and seeds a ' +
        'template through them, and no domain imports it',
      severity: 'error',
      from: { path: DOMAINS },
      to: { path: '^src/fixtures/' },
    },
    {
      name: 'objstore-storage-below-server',
      comment: "the objstore's storage and plain-file view do not import its server",
      severity: 'error',
      from: { path: '^src/objstore/(storage|file-view)/' },
      to: { path: '^src/objstore/server/' },
    },
    {
      name: 'objstore-not-a-client',
      comment: 'the objstore (the S3 server side) does not import the S3 client side (destinations/)',
      severity: 'error',
      from: { path: '^src/objstore/' },
      to: { path: '^src/destinations/' },
    },
    {
      name: 'no-composition-root-below-it',
      comment:
        'only the composition root (localplane.ts, cli.ts, index.ts) imports itself and the admin module (its ' +
        "routes and methods); the admin API's shapes (admin/schemas.ts) are for its clients too",
      severity: 'error',
      from: { path: '^src/', pathNot: `${COMPOSITION_ROOT}|^src/(admin|test-runners)/` },
      to: { path: `${COMPOSITION_ROOT}|^src/admin/(module|routes|client)\\.ts$` },
    },
    {
      name: 'test-runners-on-top',
      comment: 'nothing below src/test-runners/ (localplane/vitest, localplane/jest/*) imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/test-runners/' },
      to: { path: '^src/test-runners/' },
    },
    {
      name: 'test-runners-use-the-package-api',
      comment: 'src/test-runners/ imports only the package API (index.ts) and its own files',
      severity: 'error',
      from: { path: '^src/test-runners/' },
      to: { path: '^src/', pathNot: '^src/(index\\.ts$|test-runners/)' },
    },
    {
      name: 'no-cycle',
      comment: 'a cycle makes load order matter and hides who depends on whom',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    includeOnly: '^src/',
    // Type-only imports are read from the TypeScript source (they are gone from its JavaScript).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
