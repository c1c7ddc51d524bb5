import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, startCli, type Launched } from '../support/cli.ts';
import { DOC_FILES, docBlocks, lineMatches, shapeDiffers, type Check, type DocBlock } from '../support/doc-blocks.ts';

/**
 * Every fenced block of README.md and docs/ runs, or is compared with what the command its marker names prints, or
 * says in its marker why it cannot run here (test/support/doc-blocks.ts has the markers). Each page's blocks run in
 * order in one working folder, `<tmp>/me/project` (shown as /home/me/project), against one instance of its own started
 * as the docs say (`localplane start`, on free ports shown as 9400 and 9401).
 */

const PAGES = DOC_FILES.map((file) => ({ file, blocks: docBlocks(file) }));
const TSX = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
const COMMAND_SECONDS = 90;
const READY = /^localplane ready api=http:\/\/127\.0\.0\.1:9400 objstore=http:\/\/127\.0\.0\.1:9401$/m;

interface Printed {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Page {
  home: string;
  folder: string;
  env: NodeJS.ProcessEnv;
  instance: Launched;
  apiPort: string;
  objstorePort: string;
  /** What the last block that ran printed on stdout: a `json` or `shape` block without a command is compared to it. */
  lastOutput: string;
}

/** The command as a user types it, pointed at the page's instance. */
const rewrite = (page: Page, command: string) =>
  command
    .replace(/\bnpx localplane\b/g, 'localplane')
    .replace(/\b(?:localhost|127\.0\.0\.1):9400\b/g, `127.0.0.1:${page.apiPort}`)
    .replace(/\b(?:localhost|127\.0\.0\.1):9401\b/g, `127.0.0.1:${page.objstorePort}`)
    .replace(/--port 9400\b/g, `--port ${page.apiPort}`)
    .replace(/--objstore-port 9401\b/g, `--objstore-port ${page.objstorePort}`);

/**
 * What a command printed, as the docs show it: the page's ports as 9400 and 9401 (any instance's in a ready line), its
 * folder under /home/me.
 */
const normalise = (page: Page, text: string) =>
  text
    .replace(
      /^localplane ready api=http:\/\/127\.0\.0\.1:\d+ objstore=http:\/\/127\.0\.0\.1:\d+$/m,
      'localplane ready api=http://127.0.0.1:9400 objstore=http://127.0.0.1:9401',
    )
    .replaceAll(`:${page.apiPort}`, ':9400')
    .replaceAll(`:${page.objstorePort}`, ':9401')
    .replaceAll(`port ${page.apiPort} `, 'port 9400 ')
    .replaceAll(`port ${page.objstorePort} `, 'port 9401 ')
    .replaceAll(page.home, '/home/me');

/**
 * Runs a shell command in the page's folder. A `localplane start` expected to succeed is stopped (SIGTERM) once it
 * has printed its ready line.
 */
function sh(page: Page, command: string, untilReady = false, block = ''): Promise<Printed> {
  const child = spawn('bash', ['-c', command], {
    cwd: page.folder,
    env: { ...page.env, BLOCK: block },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(stop, COMMAND_SECONDS * 1000);
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    if (untilReady && stdout.includes('\n')) stop();
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: normalise(page, stdout), stderr: normalise(page, stderr) });
    }),
  );
}

async function printed(page: Page, check: Check): Promise<string> {
  const command = rewrite(page, check.argument);
  const starts = check.exit === 0 && /\blocalplane start\b/.test(command);
  const result = await sh(page, command, starts);
  const text = { stdout: result.stdout, stderr: result.stderr, both: result.stdout + result.stderr }[check.stream];
  if (!starts) expect(result.code, `${check.argument}\n${result.stdout}${result.stderr}`).toBe(check.exit);
  return text.replace(/\n$/, '');
}

function expectLines(doc: string[], actual: string[], context: string) {
  expect(
    actual.length,
    `${context}: ${actual.length} lines printed, ${doc.length} in the doc\n${actual.join('\n')}`,
  ).toBe(doc.length);
  for (const [index, line] of doc.entries())
    expect(
      lineMatches(line, actual[index]!),
      `${context}, line ${index + 1}:\n  doc:  ${line}\n  here: ${actual[index]}`,
    ).toBe(true);
}

async function check(page: Page, block: DocBlock, blockIndex: number) {
  const where = `${block.file}:${block.line}`;
  const docLines = block.text.split('\n');
  const lineChecks = block.checks.filter((c) => c.kind === 'output-line');
  if (lineChecks.length > 0) {
    expect(lineChecks.length, `${where}: one output-line marker a line`).toBe(docLines.length);
    for (const [index, lineCheck] of lineChecks.entries()) {
      const text = await printed(page, lineCheck);
      expectLines([docLines[index]!], text.split('\n'), `${where} (${lineCheck.argument})`);
    }
  }
  for (const each of block.checks) {
    switch (each.kind) {
      case 'run': {
        const script = `set -eo pipefail\n${rewrite(page, each.argument || block.text)}`;
        const result = await sh(page, script, false, rewrite(page, block.text));
        expect(result.code, `${where} ran:\n${result.stdout}${result.stderr}`).toBe(each.exit);
        page.lastOutput = result.stdout;
        break;
      }
      case 'starts': {
        const result = await sh(page, rewrite(page, each.argument || block.text), true);
        expect(result.stdout, `${where} printed:\n${result.stdout}${result.stderr}`).toMatch(READY);
        break;
      }
      case 'output':
        expectLines(docLines, (await printed(page, each)).split('\n'), `${where} (${each.argument})`);
        break;
      case 'json':
      case 'shape': {
        const text = each.argument ? await printed(page, each) : page.lastOutput;
        const differs = shapeDiffers(JSON.parse(block.text), JSON.parse(text), each.kind === 'json');
        expect(differs, `${where} (${each.argument}) answered ${text.slice(0, 400)}`).toBeUndefined();
        break;
      }
      case 'file':
        writeFileSync(join(page.folder, each.argument), block.text + '\n');
        break;
      case 'ts': {
        // The module, then an exit: an example need not stop what it started. It imports localplane as a project that
        // installed it does (node_modules/localplane: the compiled dist/ that npm test builds).
        const module = join(page.folder, `block-${blockIndex}.mts`);
        const entry = join(page.folder, `block-${blockIndex}-run.mts`);
        const source = `${each.argument}\n${rewrite(page, block.text)}`;
        writeFileSync(module, source);
        writeFileSync(entry, `await import(${JSON.stringify(module)});\nprocess.exit(0);\n`);
        const result = await sh(page, `${TSX} ${entry}`);
        expect(result.code, `${where} ran:\n${result.stdout}${result.stderr}`).toBe(0);
        break;
      }
      case 'covered':
        expect(existsSync(join(REPO_ROOT, each.argument)), `${where}: ${each.argument}`).toBe(true);
        break;
      case 'skip':
        expect(each.argument.length, `${where}: a skip says why`).toBeGreaterThan(10);
        break;
      case 'output-line':
        break;
    }
  }
}

describe('every fenced block of the docs', () => {
  it('has a marker the checker reads, unless a shell script it runs', () => {
    for (const { blocks } of PAGES)
      for (const block of blocks)
        expect(block.checks.length, `${block.file}:${block.line}: no <!-- check: ... --> above it`).toBeGreaterThan(0);
  });

  it('counts', () => {
    const counts: Record<string, number> = {};
    for (const { blocks } of PAGES)
      for (const block of blocks) {
        const kinds = block.checks.map((c) => (c.kind === 'output-line' ? 'output' : c.kind));
        const kind = kinds.find((k) => k !== 'file') ?? kinds[0] ?? 'none';
        counts[kind] = (counts[kind] ?? 0) + 1;
      }
    console.log(`doc blocks: ${JSON.stringify(counts)}`);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });
});

// The pages run side by side, each its blocks in order.
describe.concurrent('each page', () => {
  for (const { file, blocks } of PAGES) {
    const runnable = blocks.filter((block) => block.checks.some((c) => !['skip', 'covered'].includes(c.kind)));
    if (runnable.length === 0) continue;
    describe.sequential(file, () => {
      let root: string;
      const page = {} as Page;

      beforeAll(async () => {
        root = mkdtempSync(join(tmpdir(), 'lp-doc-'));
        page.home = join(root, 'me');
        page.folder = join(page.home, 'project');
        mkdirSync(page.folder, { recursive: true });
        const shims = join(root, 'bin');
        mkdirSync(shims);
        writeFileSync(
          join(shims, 'localplane'),
          `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
        );
        chmodSync(join(shims, 'localplane'), 0o755);
        // A project with localplane installed (node_modules/localplane), its own temp folder (the demo's <tmp> copy).
        mkdirSync(join(page.folder, 'node_modules'));
        symlinkSync(REPO_ROOT, join(page.folder, 'node_modules', 'localplane'));
        mkdirSync(join(root, 'tmp'));
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          PATH: `${shims}:${process.env.PATH}`,
          NO_COLOR: '1',
          TMPDIR: join(root, 'tmp'),
        };
        for (const name of Object.keys(env))
          if (name.startsWith('LOCALPLANE_') && name !== 'LOCALPLANE_CACHE_DIR') delete env[name];
        page.instance = await startCli(['--quiet'], env, page.folder);
        page.apiPort = new URL(page.instance.apiUrl).port;
        page.objstorePort = new URL(page.instance.objstoreUrl).port;
        const fixtures = (await (await fetch(`${page.instance.apiUrl}/_localplane/fixtures`)).json()) as {
          workspaces: { tier: string; api_key: string }[];
        };
        page.env = {
          ...env,
          API_PORT: page.apiPort,
          OBJSTORE_PORT: page.objstorePort,
          LOCALPLANE_URL: page.instance.apiUrl,
          KEY: fixtures.workspaces.find((workspace) => workspace.tier === 'plus')!.api_key,
          REPO: REPO_ROOT,
          TSX_TSCONFIG_PATH: join(REPO_ROOT, 'tsconfig.json'),
          ME: page.home,
        };
      });

      afterAll(async () => {
        await page.instance?.kill('SIGTERM');
        rmSync(root, { recursive: true, force: true });
      });

      for (const [index, block] of blocks.entries()) {
        if (!runnable.includes(block)) continue;
        it(
          `${file}:${block.line} (${block.checks.map((c) => c.kind).join(', ')})`,
          () => check(page, block, index),
          120_000,
        );
      }
    });
  }
});
