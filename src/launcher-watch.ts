/**
 * Ending with the launcher. `npm start` runs localplane as npm -> sh -> tsx -> node, and
 * `npx localplane start` as npm -> sh -> node. npm 11 forwards SIGINT and SIGTERM to the shell
 * only, which dies of them without passing them on, and nothing reaches anyone when npm is
 * killed outright: the server would go on holding its ports. So the CLI watches the chain of
 * processes from itself up to the npm (or the tsx CLI) that launched it, and stops as soon as a
 * link breaks: a process of the chain has exited and its child was re-parented.
 *
 * Started some other way (a shell, a supervisor, `nohup`), localplane outlives its parent as
 * any server does.
 */
import { readFileSync } from 'node:fs';

interface Link {
  pid: number;
  parent: number;
}

/** How often the chain is looked at, unless LOCALPLANE_LAUNCHER_POLL_MS says otherwise (tests make it short). */
const POLL_MS = 200;

function pollInterval(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.LOCALPLANE_LAUNCHER_POLL_MS);
  return Number.isInteger(ms) && ms > 0 ? ms : POLL_MS;
}

/** The parent of a process, from /proc (Linux); null when the process is gone or /proc is not there. */
function parentOf(pid: number): number | null {
  if (pid === process.pid) return process.ppid;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (command) state ppid ...`: the command may hold spaces and parentheses.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** Whether a process runs inside an npm script (npm gives the script's processes this variable, not itself). */
function runsInNpmScript(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1')
      .split('\0')
      .some((entry) => entry.startsWith('npm_lifecycle_event='));
  } catch {
    return false;
  }
}

/** The tsx CLI runs its child with its preflight script; `node --import tsx` runs in-process and has none. */
const launchedByTsxCli = () => process.execArgv.some((arg) => /[\\/]tsx[\\/]dist[\\/]preflight\.cjs$/.test(arg));

/**
 * The links to watch: this process and its parent, and under npm every process of the npm
 * script above it, up to npm itself (where /proc tells; elsewhere only the parent).
 */
export function launcherChain(): Link[] {
  const underNpm = process.env.npm_lifecycle_event !== undefined;
  if (!underNpm && !launchedByTsxCli()) return [];
  const links: Link[] = [{ pid: process.pid, parent: process.ppid }];
  if (!underNpm) return links;
  for (let pid = process.ppid; pid > 1 && runsInNpmScript(pid);) {
    const parent = parentOf(pid);
    if (parent === null) break;
    links.push({ pid, parent });
    pid = parent;
  }
  return links;
}

/** Calls `onExit` once when a process of the chain exits. The timer never keeps the process alive. */
export function watchLaunchers(chain: readonly Link[], onExit: () => void): void {
  if (chain.length === 0) return;
  const timer = setInterval(() => {
    if (chain.every((link) => parentOf(link.pid) === link.parent)) return;
    clearInterval(timer);
    onExit();
  }, pollInterval(process.env));
  timer.unref();
}
