import { z } from 'zod';
import { ValidationFailed } from '../shared/errors.ts';
import { queryText, type QueryInput } from '../shared/query-text.ts';
import type { JournalEntry, NearMisses, RequestStats } from './schemas.ts';
import { faultRuleRequest, type FaultRuleInput, type FaultRuleView, type FaultRules } from './fault-rules.ts';
import { journalFind, type JournalFilterInput } from './filter.ts';
import type { RequestJournal } from './journal.ts';
import { nearMisses, nearMissesQuery } from './near-misses.ts';
import { requestStats, requestStatsQuery } from './stats.ts';

export type RequestStatsOptions = QueryInput<typeof requestStatsQuery>;
export type NearMissesOptions = QueryInput<typeof nearMissesQuery>;

/** `lp.requests`: the request journal, filtered as POST /_localplane/requests/find is. */
export interface RequestsApi {
  list(filter?: JournalFilterInput): JournalEntry[];
  /** The entries a filter matches (WireMock's findAll). */
  find(filter: JournalFilterInput): JournalEntry[];
  /**
   * How many entries match, e.g. to verify a client called an endpoint once: `count({ method: 'POST', path:
   * '/api/v1/bulk-exports' })`.
   */
  count(filter?: JournalFilterInput): number;
  /** One entry by its sequence id (GET /requests/{request_id}); undefined when the journal no longer holds it. */
  get(id: number): JournalEntry | undefined;
  /** Requests per minute of the wall clock and the latest errors (GET /requests/stats). */
  stats(options?: RequestStatsOptions): RequestStats;
  clear(): void;
}

/** `lp.faultRules`: the fault rules of /_localplane/fault-rules. */
export interface FaultRulesApi {
  add(rule: FaultRuleInput): FaultRuleView;
  list(): FaultRuleView[];
  /** False when there is no such rule. */
  remove(id: string): boolean;
  clear(): void;
  /**
   * The journalled requests no rule acted on, each beside the rule closest to matching it (GET
   * /fault-rules/near-misses).
   */
  nearMisses(options?: NearMissesOptions): NearMisses;
}

/** Parses a caller's value, a bad one as a TypeError in zod's words. */
function parsed<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new TypeError(z.prettifyError(result.error));
  return result.data;
}

export function requestsApi(journal: RequestJournal): RequestsApi {
  const list = (filter: JournalFilterInput = {}) => journal.list(parsed(journalFind, filter));
  return {
    list,
    find: list,
    count: (filter = {}) => journal.count(parsed(journalFind, filter)),
    get: (id) => journal.get(id),
    stats: (options = {}) => requestStats(journal, Date.now(), parsed(requestStatsQuery, queryText(options))),
    clear: () => journal.clear(),
  };
}

/** Adds a rule, one that could never fire refused as a TypeError naming why. */
function added(rules: FaultRules, rule: FaultRuleInput): FaultRuleView {
  try {
    return rules.add(parsed(faultRuleRequest, rule));
  } catch (error) {
    if (error instanceof ValidationFailed)
      throw new TypeError(error.details.map((detail) => `${detail.loc.slice(1).join('.')}: ${detail.msg}`).join('\n'), {
        cause: error,
      });
    throw error;
  }
}

export function faultRulesApi(rules: FaultRules, journal: RequestJournal): FaultRulesApi {
  return {
    add: (rule) => added(rules, rule),
    list: () => rules.list(),
    remove: (id) => rules.remove(id),
    clear: () => rules.clear(),
    nearMisses: (options = {}) => nearMisses(journal, rules, parsed(nearMissesQuery, queryText(options))),
  };
}
