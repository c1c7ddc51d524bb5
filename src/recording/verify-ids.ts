import { UUID_SOURCE } from '../shared/ids.ts';
import { copyJson, pushInOrder, stringsOf } from '../shared/json-walk.ts';

/**
 * A UUID anywhere in a string: alone, or inside the service's other id shapes (`lp-dcr-<uuid>`,
 * `export_id=<uuid>/...`).
 */
const UUID_ANYWHERE = new RegExp(UUID_SOURCE, 'gi');

const idsIn = (text: string) => Array.from(text.matchAll(UUID_ANYWHERE), (match) => match[0].toLowerCase());

/** Every id in the strings of a JSON value (keys included: some objects are keyed by id). */
export function idsOf(value: unknown): string[] {
  return Array.from(stringsOf(value)).flatMap(idsIn);
}

/** Why a recorded request cannot be replayed here: an id it names that means nothing in localplane. */
export interface UnknownId {
  id: string;
  /** The exchange whose recorded answer showed it first; null when none did. */
  firstSeenIn: number | null;
}

/**
 * Recorded ids and localplane's for the same resources, learnt as the replay goes: the answers
 * to the same request are walked side by side, and where the same place holds another id, the
 * recorded one stands for the local one in every later request.
 */
export class IdMap {
  private readonly recordedToLocal = new Map<string, string>();
  private readonly localIds = new Set<string>();
  /** Recorded ids some recorded answer showed, by the exchange that showed them first. */
  private readonly firstSeen = new Map<string, number>();

  /**
   * @param fixtureIds ids both sides hold from the start (workspaces, projects, integrations, ...): never mapped to
   * anything else.
   */
  constructor(private readonly fixtureIds: ReadonlySet<string>) {}

  /** Maps a recorded id to a local one outright (the recorded workspace to the fixture workspace). */
  map(recorded: string, local: string): void {
    this.recordedToLocal.set(recorded.toLowerCase(), local.toLowerCase());
    this.localIds.add(local.toLowerCase());
  }

  /** The text with every mapped id replaced by its local counterpart. */
  rewriteText(text: string): string {
    return text.replace(UUID_ANYWHERE, (id) => this.recordedToLocal.get(id.toLowerCase()) ?? id);
  }

  /** A copy of a JSON value with every mapped id replaced, in its strings and its keys. */
  rewriteJson(value: unknown): unknown {
    const rewrite = (text: string) => this.rewriteText(text);
    return copyJson(value, (field) => (typeof field === 'string' ? { value: rewrite(field) } : undefined), rewrite);
  }

  /**
   * Notes the ids a recorded answer shows first and learns from it beside the local answer to the
   * same request (`local` undefined when there is none to learn from: not replayed, another status).
   */
  learn(recorded: unknown, local: unknown, exchange: number): void {
    this.walk(recorded, local);
    for (const id of idsOf(recorded)) if (!this.firstSeen.has(id)) this.firstSeen.set(id, exchange);
  }

  /** The ids among these that neither a fixture nor an earlier answer accounts for. */
  unknown(ids: readonly string[]): UnknownId[] {
    const unknown = new Map<string, UnknownId>();
    for (const id of ids) {
      if (this.fixtureIds.has(id) || this.recordedToLocal.has(id)) continue;
      unknown.set(id, { id, firstSeenIn: this.firstSeen.get(id) ?? null });
    }
    return [...unknown.values()];
  }

  /** The map as learnt, recorded id → local id, leaving out ids that are the same on both sides. */
  mapped(): Record<string, string> {
    return Object.fromEntries([...this.recordedToLocal].filter(([recorded, local]) => recorded !== local));
  }

  /** Pairs the ids the two answers hold in the same places, in the order the recorded answer has them. */
  private walk(recordedAnswer: unknown, localAnswer: unknown): void {
    const pending: [unknown, unknown][] = [[recordedAnswer, localAnswer]];
    while (pending.length > 0) {
      const [recorded, local] = pending.pop()!;
      const alongside: [unknown, unknown][] = [];
      if (typeof recorded === 'string' && typeof local === 'string') {
        const [recordedIds, localIds] = [idsIn(recorded), idsIn(local)];
        if (recordedIds.length === localIds.length) recordedIds.forEach((id, index) => this.pair(id, localIds[index]!));
      } else if (Array.isArray(recorded) && Array.isArray(local)) {
        for (let index = 0; index < Math.min(recorded.length, local.length); index++)
          alongside.push([recorded[index], local[index]]);
      } else if (recorded !== null && local !== null && typeof recorded === 'object' && typeof local === 'object') {
        for (const [key, field] of Object.entries(recorded)) {
          if (Object.hasOwn(local, key)) alongside.push([field, (local as Record<string, unknown>)[key]]);
        }
      }
      // In order: a recorded id is paired once, with the first local id it meets.
      pushInOrder(pending, alongside);
    }
  }

  /**
   * A recorded id is mapped once, and never onto an id that already stands for another
   * (a list ordered otherwise here must not map two resources onto one) nor onto a fixture's.
   */
  private pair(recorded: string, local: string): void {
    if (this.recordedToLocal.has(recorded) || this.fixtureIds.has(recorded)) return;
    if (recorded !== local && (this.localIds.has(local) || this.fixtureIds.has(local))) return;
    this.map(recorded, local);
  }
}
