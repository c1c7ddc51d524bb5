import { isTerminalStatus } from './bulk-exports/statuses.ts';
import type { ProgressEvent } from './progress.ts';

/** Redraws of the status line at most this often, except for the last state of a piece of work. */
const REDRAW_MS = 100;
const CLEAR_LINE = '\r\x1b[2K';

const count = (value: number) => value.toLocaleString('en-US');

/** The status line's text, and whether this is the work's last word. */
function describeProgress(event: ProgressEvent): { text: string; final: boolean } {
  if (event.kind === 'fixtures') {
    const percent = event.runsTotal === 0 ? 100 : Math.floor((100 * event.runsDone) / event.runsTotal);
    return {
      text: `building fixtures: ${count(event.runsDone)}/${count(event.runsTotal)} runs (${percent}%)`,
      final: event.runsDone >= event.runsTotal,
    };
  }
  return {
    text:
      `export ${event.exportId} ${event.status}: ` +
      `runs ${event.runsDone}/${event.runsTotal}, ${count(event.rowsWritten)} rows written`,
    final: isTerminalStatus(event.status),
  };
}

/**
 * One updating status line at the bottom of a terminal: the latest progress, redrawn in place.
 * Log lines go above it; an export's last state stays as a line of its own; a finished
 * fixture build leaves nothing behind.
 */
export class ProgressLine {
  private status = '';
  private drawnAt = 0;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly now: () => number = Date.now,
  ) {}

  readonly show = (event: ProgressEvent): void => {
    const { text, final } = describeProgress(event);
    if (final) {
      this.clear();
      if (event.kind === 'export') this.stream.write(`localplane: ${text}\n`);
      return;
    }
    if (this.now() - this.drawnAt < REDRAW_MS) return;
    this.status = text;
    this.draw();
  };

  /** A log line, written above the status line. */
  readonly log = (line: string): void => {
    this.stream.write(`${this.status ? CLEAR_LINE : ''}localplane: ${line}\n`);
    this.draw();
  };

  clear(): void {
    if (this.status) this.stream.write(CLEAR_LINE);
    this.status = '';
  }

  private draw(): void {
    if (!this.status) return;
    // Never wider than the terminal: a wrapped line could not be redrawn in place.
    const width = Math.max(10, (this.stream.columns || 80) - 1);
    this.stream.write(`${CLEAR_LINE}${this.status.slice(0, width)}`);
    this.drawnAt = this.now();
  }
}
