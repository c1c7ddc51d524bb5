/** What a long piece of work has done so far, for a display (the CLI's status line in a terminal). */
export type ProgressEvent =
  /** Runs generated into a fixture template being built (only on a cache miss). */
  | { kind: 'fixtures'; runsDone: number; runsTotal: number }
  /**
   * An export after one of its files was recorded or one of its runs ended; `status` as the API spells it (`Running`,
   * `Completed` ...).
   */
  | { kind: 'export'; exportId: string; status: string; runsDone: number; runsTotal: number; rowsWritten: number };

export type ProgressListener = (event: ProgressEvent) => void;
