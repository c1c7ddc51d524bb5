/**
 * When a teardown step runs: `intake` steps first (nothing new comes in), then `work` steps in
 * the order added (the scheduler stops before what it drove is waited for), then `resources`
 * steps last added first (a resource closes after whatever was built on it).
 */
export type TeardownStage = 'intake' | 'work' | 'resources';

/** What an instance closes when it stops, or when its start fails half-way: each module adds its own as it is built. */
export class Teardown {
  private readonly steps: Record<TeardownStage, (() => unknown)[]> = { intake: [], work: [], resources: [] };
  private running: Promise<void> | null = null;

  add(stage: TeardownStage, step: () => unknown): void {
    this.steps[stage].push(step);
  }

  /** Runs every step once; a second call waits for the first. */
  run(): Promise<void> {
    return (this.running ??= (async () => {
      for (const step of [...this.steps.intake, ...this.steps.work, ...this.steps.resources.reverse()]) await step();
    })());
  }
}
