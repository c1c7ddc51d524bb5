import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/localplane.js', import.meta.url));

export interface SpawnedLocalplane {
  pid: number;
  apiUrl: string;
  /** From spawn to the ready line. */
  readyMs: number;
  /** SIGTERM, resolved once it has exited. */
  stop(): Promise<void>;
}

/** Spawns the compiled `localplane start` on 127.0.0.1 and free ports, without its request log; resolves once it prints its ready line. */
export function spawnLocalplane(nodeFlags: readonly string[] = []): Promise<SpawnedLocalplane> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...nodeFlags, BIN, 'start', '--host', '127.0.0.1', '--port', '0', '--objstore-port', '0', '--quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /localplane ready api=(\S+)/.exec(output);
      if (!ready) return;
      resolve({
        pid: child.pid!,
        apiUrl: ready[1]!,
        readyMs: performance.now() - spawnedAt,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`localplane exited with ${code} before it was ready`)));
  });
}
