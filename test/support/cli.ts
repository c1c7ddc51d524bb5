import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The compiled executable (`pretest` builds dist/). */
export const BIN = fileURLToPath(new URL('../../bin/localplane.js', import.meta.url));

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Launched {
  child: ChildProcess;
  apiUrl: string;
  objstoreUrl: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
  /** Sends the signal to the launched process and waits for it to exit. */
  kill(signal: NodeJS.Signals): Promise<Exit>;
}

const READY = /^localplane ready api=(\S+) objstore=(\S+)$/m;

/** Spawns a command that starts localplane, and resolves once it has printed its ready line. */
export function launch(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd = REPO_ROOT,
): Promise<Launched> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const ready = READY.exec(stdout);
      if (!ready) return;
      child.stdout!.removeAllListeners('data').on('data', (more) => (stdout += more));
      resolve({
        child,
        apiUrl: ready[1]!,
        objstoreUrl: ready[2]!,
        stdout: () => stdout,
        stderr: () => stderr,
        exited,
        kill: (signal) => {
          child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((exit) =>
      reject(
        new Error(`${command} ${args.join(' ')} exited (${exit.code ?? exit.signal}) before it was ready: ${stderr}`),
      ),
    );
  });
}

/** `localplane start` from the compiled executable on free ports, with more flags. */
export function startCli(flags: readonly string[] = [], env?: NodeJS.ProcessEnv, cwd?: string): Promise<Launched> {
  return launch(process.execPath, [BIN, 'start', '--port', '0', '--objstore-port', '0', ...flags], env, cwd);
}

/** Runs the compiled executable to its end. */
export function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd = REPO_ROOT,
): Promise<Exit & { stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/**
 * Runs the executable and expects a usage error: exit code 2, nothing on stdout, one line on stderr matching `words`.
 */
export async function expectUsageError(args: readonly string[], words: RegExp): Promise<void> {
  const result = await runCli(args);
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(words);
  expect(result.stderr.trim().split('\n'), 'one line, no stack trace').toHaveLength(1);
}
