import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adminApiTable, ADMIN_API_DOC, withAdminApiTable, type Document } from '../scripts/docs-admin-api.ts';
import { DEFAULT_LIMITS } from '../src/config.ts';
import { createLocalplane } from '../src/index.ts';
import { REPO_ROOT } from './support/cli.ts';

const DOCS = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const read = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

function anchorsOf(file: string): Set<string> {
  const withoutCode = read(file).replace(/^```[^]*?^```/gm, '');
  return new Set([...withoutCode.matchAll(/^#+ (.+)$/gm)].map((match) => anchor(match[1]!)));
}

describe('the docs', () => {
  it.each(DOCS)('%s: every relative link names a file that exists, and a heading in it', (file) => {
    const text = read(file).replace(/^```[^]*?^```/gm, '');
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((link) => !/^[a-z]+:/.test(link));
    for (const link of links) {
      const [path, hash] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : join(dirname(file), path);
      const exists = existsSync(resolve(REPO_ROOT, target));
      expect(exists, `${file} links to ${link}`).toBe(true);
      if (exists && hash !== undefined && target.endsWith('.md')) expect(anchorsOf(target), `${file} links to ${link}`).toContain(hash);
    }
  });

  it('docs/admin-api.md lists every /_localplane endpoint as the served document has it (npm run docs:admin)', async () => {
    const lp = await createLocalplane();
    try {
      const document = (await (await lp.request('/openapi.json')).json()) as Document;
      const current = readFileSync(ADMIN_API_DOC, 'utf8');
      expect(current).toBe(withAdminApiTable(current, adminApiTable(document)));
      expect(current).toContain('| `POST /fault-rules` |');
    } finally {
      await lp.stop();
    }
  });

  it('docs/limits.md gives the defaults the code has', () => {
    // The default column: a number (of MiB where it says so), or a JSON value in backticks.
    const rows = new Map([...read('docs/limits.md').matchAll(/^\| `(\w+)` \| (?:`([^`]+)`|([\d.]+)( MiB)?)/gm)].map((match) => {
      const shown = match[2] !== undefined ? JSON.parse(match[2]) : Number(match[3]) * (match[4] ? 1024 * 1024 : 1);
      return [match[1]!, shown];
    }));
    expect([...rows.keys()].sort()).toEqual(Object.keys(DEFAULT_LIMITS).sort());
    for (const [name, shown] of rows) expect(shown, name).toEqual(DEFAULT_LIMITS[name as keyof typeof DEFAULT_LIMITS]);
  });
});
