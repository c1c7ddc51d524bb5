import { z } from 'zod';
import { ValidationFailed } from '../shared/errors.ts';
import type { JournalEntry } from './schemas.ts';
import { faultRuleRequest, type FaultRuleInput, type FaultRuleView, type FaultRules } from './fault-rules.ts';
import { journalFind, type JournalFilterInput } from './filter.ts';
import type { RequestJournal } from './journal.ts';

/** `lp.requests`: the request journal, filtered as POST /_localplane/requests/find is. */
export interface RequestsApi {
  list(filter?: JournalFilterInput): JournalEntry[];
  /** The entries a filter matches (WireMock's findAll). */
  find(filter: JournalFilterInput): JournalEntry[];
  /** How many entries match, e.g. to verify a client called an endpoint once: `count({ method: 'POST', path: '/api/v1/bulk-exports' })`. */
  count(filter?: JournalFilterInput): number;
  clear(): void;
}

/** `lp.faultRules`: the fault rules of /_localplane/fault-rules. */
export interface FaultRulesApi {
  add(rule: FaultRuleInput): FaultRuleView;
  list(): FaultRuleView[];
  /** False when there is no such rule. */
  remove(id: string): boolean;
  clear(): void;
}

/** Parses a caller's value, a bad one as a TypeError in zod's words. */
function parsed<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new TypeError(z.prettifyError(result.error));
  return result.data;
}

export function requestsApi(journal: RequestJournal): RequestsApi {
  const list = (filter: JournalFilterInput = {}) => journal.list(parsed(journalFind, filter));
  return { list, find: list, count: (filter = {}) => journal.count(parsed(journalFind, filter)), clear: () => journal.clear() };
}

/** Adds a rule, one that could never fire refused as a TypeError naming why. */
function added(rules: FaultRules, rule: FaultRuleInput): FaultRuleView {
  try {
    return rules.add(parsed(faultRuleRequest, rule));
  } catch (error) {
    if (error instanceof ValidationFailed) throw new TypeError(error.details.map((detail) => `${detail.loc.slice(1).join('.')}: ${detail.msg}`).join('\n'));
    throw error;
  }
}

export function faultRulesApi(rules: FaultRules): FaultRulesApi {
  return {
    add: (rule) => added(rules, rule),
    list: () => rules.list(),
    remove: (id) => rules.remove(id),
    clear: () => rules.clear(),
  };
}
