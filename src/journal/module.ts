import type { InstanceCore } from '../core.ts';
import { FaultRules } from './fault-rules.ts';
import { DEFAULT_JOURNAL_CAPACITY, RequestJournal } from './journal.ts';
import { RequestObserver } from './observe.ts';
import { faultRulesApi, requestsApi } from './programmatic.ts';
import { journalRoutes } from './routes.ts';
import { JournalStreams } from './stream.ts';

export interface JournalModuleOptions {
  /** How many requests the journal keeps; default DEFAULT_JOURNAL_CAPACITY. */
  capacity?: number;
  /** One line per request on the log, the status coloured with `'colour'`. */
  requestLog?: boolean | 'colour';
  /** The workspace an API key belongs to, for fault rules matched before authentication. */
  workspaceOfApiKey(apiKey: string): string | null;
  /** Whether a workspace exists, for refusing a fault rule on one that does not. */
  workspaceExists(id: string): boolean;
}

/** The request journal of the API and the objstore, and the fault rules that answer requests instead. */
export function journalModule(core: InstanceCore, options: JournalModuleOptions) {
  const journal = new RequestJournal(options.capacity ?? DEFAULT_JOURNAL_CAPACITY);
  const faultRules = new FaultRules(core.seed, options.workspaceExists);
  const observer = new RequestObserver({
    journal,
    faultRules,
    clock: core.clock,
    workspaceOfApiKey: options.workspaceOfApiKey,
    requestLog: options.requestLog ? core.log : null,
    colour: options.requestLog === 'colour',
  });
  const streams = new JournalStreams(journal);
  core.teardown.add('intake', () => observer.stop());
  core.teardown.add('intake', () => streams.closeAll());
  core.parts.register('request journal', { reset: () => journal.reset() });
  core.parts.register('fault rules', { reset: () => faultRules.reset() });
  return {
    observer,
    adminRoutes: journalRoutes({ journal, streams, faultRules }),
    requests: requestsApi(journal),
    faultRules: faultRulesApi(faultRules, journal),
  };
}
