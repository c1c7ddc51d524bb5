import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { customIssue, ValidationFailed, type ValidationDetail } from '../shared/errors.ts';
import { createRandom, seedFrom, type Random } from '../shared/prng.ts';
import {
  missedFields,
  onlyHarnessPaths,
  requestMatcher,
  requestMatchFields,
  type MatchableRequest,
  type MissedField,
} from './matching.ts';

/** Added latency is wall time, and at most this much per request. */
export const MAX_LATENCY_MS = 60_000;
const latencyMs = z.number().min(0).max(MAX_LATENCY_MS);

const latencyDistribution = z.discriminatedUnion('distribution', [
  z.strictObject({ distribution: z.literal('uniform'), min_ms: latencyMs, max_ms: latencyMs }),
  z.strictObject({ distribution: z.literal('normal'), mean_ms: latencyMs, stddev_ms: latencyMs }),
]);

const ACTION_KINDS = ['status', 'latency_ms', 'latency', 'drop_connection', 'empty_reply'] as const;

/** Headers that frame a reply: a fault's error reply sets them itself. */
const FRAMING_HEADERS = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'content-encoding',
]);
const MAX_REPLY_HEADERS = 20;

/** Headers an error reply carries beside its own (`Retry-After`, say). */
const replyHeaders = z
  .record(
    z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/),
    z
      .string()
      .max(1000)
      .regex(/^[^\r\n\0]*$/),
  )
  .refine((headers) => Object.keys(headers).length <= MAX_REPLY_HEADERS, {
    message: `at most ${MAX_REPLY_HEADERS} headers`,
  })
  .refine((headers) => Object.keys(headers).every((name) => !FRAMING_HEADERS.has(name.toLowerCase())), {
    message: `the reply sets its own ${[...FRAMING_HEADERS].join(', ')}`,
  });

/**
 * Exactly one of: an error reply (`status`, with `detail`, for the objstore an S3 error `code`,
 * `headers` beside its own, and for the API a JSON `body` in place of `{"detail": ...}`), added
 * latency (fixed or drawn from a distribution; then the request is served), a dropped
 * connection (reset, no reply) or an empty reply (the connection closed without a byte).
 */
export const faultAction = z
  .strictObject({
    status: z.int().min(400).max(599).optional(),
    detail: z.string().min(1).max(1000).optional(),
    code: z
      .string()
      .regex(/^[A-Za-z]{1,64}$/)
      .optional(),
    headers: replyHeaders.optional(),
    /** Any JSON value (the request is JSON): a recursive JSON schema would not fit the served document. */
    body: z.unknown().optional(),
    latency_ms: latencyMs.optional(),
    latency: latencyDistribution.optional(),
    drop_connection: z.literal(true).optional(),
    empty_reply: z.literal(true).optional(),
  })
  .superRefine((action, ctx) => {
    const given = ACTION_KINDS.filter((kind) => action[kind] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue(
        customIssue(
          'value_error',
          `an action has exactly one of ${ACTION_KINDS.join(', ')}; ` +
            `got ${given.length === 0 ? 'none' : given.join(', ')}`,
        ),
      );
    }
    if (
      action.status === undefined &&
      (['detail', 'code', 'headers', 'body'] as const).some((field) => action[field] !== undefined)
    ) {
      ctx.addIssue(customIssue('value_error', 'detail, code, headers and body go with status'));
    }
    if (action.latency?.distribution === 'uniform' && action.latency.min_ms > action.latency.max_ms) {
      ctx.addIssue(customIssue('value_error', 'latency min_ms is more than max_ms'));
    }
  });
export type FaultAction = z.output<typeof faultAction>;

export const faultRuleRequest = z.strictObject({
  match: z.strictObject(requestMatchFields).default({}),
  action: faultAction,
  /** The chance that a matching request is acted on, drawn from the instance's seeded generator. */
  probability: z.number().min(0).max(1).default(1),
  /** How many times the rule acts before it is spent; null for no end. */
  count: z.int().min(1).nullable().default(null),
});
export type FaultRuleRequest = z.output<typeof faultRuleRequest>;
export type FaultRuleInput = z.input<typeof faultRuleRequest>;

export const faultRuleParams = z.object({ rule_id: z.string().min(1) });

interface FaultRule extends FaultRuleRequest {
  id: string;
  /** Requests the rule was checked against while it was not spent (the first rule that fires ends the checks). */
  checked: number;
  fired: number;
}

/** A rule as listed: how often it fired, and how many more times it will (null: no end). */
export interface FaultRuleView extends FaultRule {
  remaining: number | null;
}

/** What a fired rule does to one request. */
export type FaultEffect =
  | { kind: 'error'; status: number; detail: string; code: string; headers: Record<string, string>; body?: unknown }
  | { kind: 'delay'; ms: number }
  | { kind: 'reset' }
  | { kind: 'close' };

/** S3's codes for the statuses tests most often inject; other statuses get `InjectedFault`. */
const S3_CODES: Readonly<Record<number, string>> = {
  400: 'InvalidRequest',
  403: 'AccessDenied',
  404: 'NoSuchKey',
  409: 'OperationAborted',
  500: 'InternalError',
  501: 'NotImplemented',
  503: 'SlowDown',
};

/** A standard normal draw (Box-Muller). */
function standardNormal(random: Random): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/**
 * Why a rule would never act as written, as 422 details: a match that could never hold (an API
 * rule on the harness's own paths, a workspace that does not exist, a workspace on objstore
 * requests, which have none), or a body for objstore answers (an S3 error, as code and detail).
 */
function refusals({ match, action }: FaultRuleRequest, workspaceExists: (id: string) => boolean): ValidationDetail[] {
  const detail = (loc: string[], input: unknown, why: string): ValidationDetail => ({
    type: 'value_error',
    loc: ['body', ...loc],
    msg: `Value error, ${why}`,
    input,
  });
  const details: ValidationDetail[] = [];
  if (match.path !== undefined && match.source !== 'objstore' && onlyHarnessPaths(match.path)) {
    details.push(
      detail(
        ['match', 'path'],
        match.path,
        "the harness's own paths (/_localplane, /docs, /ui, /openapi.json) are never faulted: this rule would never " +
          'fire',
      ),
    );
  }
  if (match.workspace_id !== undefined) {
    if (match.source === 'objstore')
      details.push(
        detail(
          ['match', 'workspace_id'],
          match.workspace_id,
          'objstore requests belong to no workspace: this rule would never fire',
        ),
      );
    else if (!workspaceExists(match.workspace_id.toLowerCase()))
      details.push(
        detail(
          ['match', 'workspace_id'],
          match.workspace_id,
          `there is no workspace ${match.workspace_id}: this rule would never fire`,
        ),
      );
  }
  if (action.body !== undefined && match.source === 'objstore') {
    details.push(
      detail(
        ['action', 'body'],
        action.body,
        'the objstore answers an S3 error document (its code and detail): a body is for API answers',
      ),
    );
  }
  return details;
}

/** Generic fault rules for the API and the objstore: the first matching rule that fires acts. */
export class FaultRules {
  private rules: {
    rule: FaultRule;
    matches: (request: MatchableRequest) => boolean;
    misses: (request: MatchableRequest) => MissedField[];
  }[] = [];
  private nextId = 1;
  private random: Random;

  constructor(
    private readonly seed: number,
    /** Whether a workspace of that id exists, for refusing a rule on one that does not. */
    private readonly workspaceExists: (id: string) => boolean,
  ) {
    this.random = this.newRandom();
  }

  private newRandom(): Random {
    return createRandom(seedFrom('fault-rules', this.seed));
  }

  /** Adds a rule; throws ValidationFailed (a 422) for one that would never act as written (see refusals). */
  add(request: FaultRuleRequest): FaultRuleView {
    const refused = refusals(request, this.workspaceExists);
    if (refused.length > 0) throw new ValidationFailed(refused);
    const rule = { id: `fault-rule-${this.nextId++}`, ...request, checked: 0, fired: 0 };
    this.rules.push({ rule, matches: requestMatcher(request.match), misses: missedFields(request.match) });
    return this.view(rule);
  }

  list(): FaultRuleView[] {
    return this.rules.map(({ rule }) => this.view(rule));
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter(({ rule }) => rule.id !== id);
    return this.rules.length < before;
  }

  clear(): void {
    this.rules = [];
  }

  /** No rules, ids from 1 and the generator from its seed: as a fresh instance. */
  reset(): void {
    this.clear();
    this.nextId = 1;
    this.random = this.newRandom();
  }

  /** The rule that acts on this request and what it does, or null; counts the firing. */
  fire(request: MatchableRequest): { ruleId: string; effect: FaultEffect } | null {
    for (const { rule, matches } of this.rules) {
      if (rule.count !== null && rule.fired >= rule.count) continue;
      rule.checked++;
      if (!matches(request)) continue;
      if (rule.probability < 1 && this.random() >= rule.probability) continue;
      rule.fired++;
      return { ruleId: rule.id, effect: this.effectOf(rule.action) };
    }
    return null;
  }

  /**
   * The rule closest to matching a request (the fewest fields missed; the first of equals), and
   * the fields it missed; null when there are no rules. A rule that missed none matched but
   * did not act: it lost its draw (`probability`), or was spent, or a rule before it acted.
   */
  nearest(request: MatchableRequest): { ruleId: string; missed: MissedField[] } | null {
    let nearest: { ruleId: string; missed: MissedField[] } | null = null;
    for (const { rule, misses } of this.rules) {
      const missed = misses(request);
      if (nearest === null || missed.length < nearest.missed.length) nearest = { ruleId: rule.id, missed };
    }
    return nearest;
  }

  private effectOf(action: FaultAction): FaultEffect {
    if (action.status !== undefined) {
      return {
        kind: 'error',
        status: action.status,
        detail: action.detail ?? STATUS_CODES[action.status] ?? 'Injected fault',
        code: action.code ?? S3_CODES[action.status] ?? 'InjectedFault',
        headers: action.headers ?? {},
        ...(action.body !== undefined ? { body: action.body } : {}),
      };
    }
    if (action.latency_ms !== undefined) return { kind: 'delay', ms: action.latency_ms };
    if (action.latency?.distribution === 'uniform') {
      return {
        kind: 'delay',
        ms: action.latency.min_ms + this.random() * (action.latency.max_ms - action.latency.min_ms),
      };
    }
    if (action.latency?.distribution === 'normal') {
      const drawn = action.latency.mean_ms + action.latency.stddev_ms * standardNormal(this.random);
      return { kind: 'delay', ms: Math.min(MAX_LATENCY_MS, Math.max(0, drawn)) };
    }
    return action.drop_connection ? { kind: 'reset' } : { kind: 'close' };
  }

  private view(rule: FaultRule): FaultRuleView {
    return { ...rule, remaining: rule.count === null ? null : rule.count - rule.fired };
  }
}
