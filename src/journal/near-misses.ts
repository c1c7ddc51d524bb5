import { z } from 'zod';
import { queryInteger } from '../shared/validation.ts';
import type { FaultRules } from './fault-rules.ts';
import type { RequestJournal } from './journal.ts';
import type { NearMisses } from './schemas.ts';

export const MAX_NEAR_MISSES = 1000;
export const DEFAULT_NEAR_MISSES = 100;

export const nearMissesQuery = z.strictObject({
  /** Requests after this sequence id (default: every kept one). */
  since: queryInteger({ min: 0 }).optional(),
  limit: queryInteger({ min: 1, max: MAX_NEAR_MISSES }).optional(),
});

/**
 * The journalled requests no rule acted on, oldest first, each beside the rule closest to matching it; none while there
 * are no rules.
 */
export function nearMisses(
  journal: RequestJournal,
  faultRules: FaultRules,
  { since, limit }: z.output<typeof nearMissesQuery>,
): NearMisses {
  const near_misses = journal.unfaulted(since ?? 0, limit ?? DEFAULT_NEAR_MISSES).flatMap((kept) => {
    const nearest = faultRules.nearest(kept);
    if (nearest === null) return [];
    const { id, time, source, method, path, status, workspace_id } = kept.entry();
    return [
      {
        request: { id, time, source, method, path, status, workspace_id },
        rule_id: nearest.ruleId,
        missed: nearest.missed,
      },
    ];
  });
  return { near_misses };
}
