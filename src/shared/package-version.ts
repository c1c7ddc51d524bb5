import { readFileSync } from 'node:fs';

/** localplane's version, as its package.json says (from src/ and dist/ alike: both sit beside it). */
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
