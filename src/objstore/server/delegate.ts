import type { IncomingMessage, ServerResponse } from 'node:http';

/** Where the gateway hands the requests it does not answer itself: s3rver's application (s3rver-app.ts). */
export interface Delegate {
  /** Answers a request the gateway has authorised (and stripped of authentication). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Resolves once every request handed over has ended: a closed connection cuts a request short, not the writes it began. */
  settled(): Promise<void>;
  close(): void;
}
