import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * `npm run check:reference`: the hosted service's reference OpenAPI document (default
 * ../shared/spec/reference-openapi.json, or LOCALPLANE_REFERENCE_OPENAPI) against
 * localplane's own document, and every suite that validates responses, validating them
 * against both documents.
 */
const reference = resolve(process.env.LOCALPLANE_REFERENCE_OPENAPI ?? '../shared/spec/reference-openapi.json');
if (!existsSync(reference))
  throw new Error(`no reference OpenAPI document at ${reference} (set LOCALPLANE_REFERENCE_OPENAPI)`);

const validatingSuites = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .map((file) => `test/${file}`)
  .filter(
    (file) =>
      file.endsWith('.test.ts') &&
      !file.startsWith('test/reference/') &&
      readFileSync(file, 'utf8').includes('../support/openapi.ts'),
  );

export default defineConfig({
  test: {
    ...base.test,
    include: ['test/reference/**/*.test.ts', ...validatingSuites],
    exclude: configDefaults.exclude,
    env: { ...base.test?.env, LOCALPLANE_REFERENCE_OPENAPI: reference },
  },
});
