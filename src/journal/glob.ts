/** A path glob is at most this long. */
export const MAX_GLOB_LENGTH = 1024;
/** At most this many wildcards (runs of `*`) in a glob. */
export const MAX_GLOB_WILDCARDS = 32;

/** What a run of stars stands for: `*` any run within one path segment, `**` (or more stars) any run, `/` included. */
const SEGMENT = -1;
const ANY = -2;
const SLASH = '/'.charCodeAt(0);

/** A glob as items: a character code each, and one item per run of stars (so no two wildcards are neighbours). */
function globItems(glob: string): number[] {
  return glob.split(/(\*+)/).flatMap((part) => {
    if (part.startsWith('*')) return [part.length === 1 ? SEGMENT : ANY];
    return Array.from({ length: part.length }, (_, at) => part.charCodeAt(at));
  });
}

/** Character classes: any character the glob does not name, `/`, then each character it names. */
const OTHER_CLASS = 0;
const SLASH_CLASS = 1;
/** The states of one glob's automaton take about this much memory at most. */
const MAX_AUTOMATON_BYTES = 1024 * 1024;
const UNKNOWN = -1;
/** What building a state answers when there is no room for it. */
const NO_ROOM = -1;
/** The dead state (no glob position left, so nothing after it matches) and the start state. */
const DEAD = 0;
const START = 1;
/**
 * A waiting state is searched ahead once it has held for this many characters (a shorter wait costs less read than
 * searched).
 */
const SEARCH_AFTER_HELD = 16;

/**
 * A glob as a deterministic automaton over the path's characters, its states made when a path
 * first reaches them, so that a path costs time linear in its length whatever the glob's
 * wildcards. A state is a set of glob positions (how far the glob may have matched): a
 * character costs one lookup in the transition table, a new state one step of the set (bit
 * operations on glob length / 32 words). Positions that another one of the set dominates are
 * dropped (a `**` takes whatever the glob before it took; a `*`, whatever the glob took since
 * the last `/` or `**`), so that most globs have about as many states as characters. A glob
 * that remembers which of many past segments matched (`**`, then `/*a` and `/*` many times)
 * has more states than MAX_AUTOMATON_BYTES holds: once full, a path that reaches a new state
 * is read on with set steps, a few word operations a character.
 *
 * A state made of wildcards, each with the position after it, waits: only the text after one
 * of its wildcards (up to the next wildcard), or a `/` for a `*`, can change it. Once it has
 * held for SEARCH_AFTER_HELD characters, the path is searched (indexOf) for the first of
 * those texts: a match that began before and would end inside that text would be an earlier
 * occurrence of it. Each text is searched for from where its last search ended, so no search
 * reads a character twice.
 */
class GlobAutomaton {
  private readonly items: Int32Array;
  private readonly words: number;
  private readonly classes: number;
  private readonly asciiClass = new Uint16Array(128);
  private readonly otherClass = new Map<number, number>();
  /** Per class: the positions whose item is that character (they advance on it). */
  private readonly advance: Uint32Array[];
  /** The wildcard positions; those that stay on a `/` (`**`), and on any other character (both). */
  private readonly wildcards: Uint32Array;
  private readonly stayOnSlash: Uint32Array;
  private readonly stayOnOther: Uint32Array;
  /** Per wildcard position: the positions before it that it dominates. */
  private readonly dominated = new Map<number, Uint32Array>();
  /** The texts states wait for, by slot: the texts after wildcards (up to the next one), and `/`. */
  private readonly texts: string[] = [];
  private readonly slotOfText = new Map<string, number>();
  /** Per wildcard position: the slot of the text after it; none when the glob ends there. */
  private readonly textAfter = new Map<number, number | null>();
  private readonly maxStates: number;
  /** The set the last build made. */
  private readonly built: Uint32Array;

  /** A row per state, a column per class: the next state, or UNKNOWN. */
  private table = new Int32Array(0);
  /** The states' sets, one after the other. */
  private sets = new Uint32Array(0);
  private states = 0;
  private accepting: boolean[] = [];
  /** Per state: the slots of the texts it waits for, or null when it does not wait. */
  private waits: (Int32Array | null)[] = [];
  /** Per state: 1 when it waits. */
  private waiting = new Uint8Array(0);
  private ids = new Map<string, number>();
  /**
   * Per text slot, while a path is read: where that text next occurs (the path's length if nowhere), -1 before a
   * search.
   */
  private readonly nextOccurrence: Int32Array;

  constructor(items: readonly number[]) {
    this.items = Int32Array.from(items);
    this.words = Math.ceil((items.length + 1) / 32);
    const charClasses = new Map<number, number>([[SLASH, SLASH_CLASS]]);
    for (const item of items) if (item >= 0 && !charClasses.has(item)) charClasses.set(item, charClasses.size + 1);
    this.classes = charClasses.size + 1;
    for (const [code, charClass] of charClasses) {
      if (code < 128) this.asciiClass[code] = charClass;
      else this.otherClass.set(code, charClass);
    }
    this.advance = Array.from({ length: this.classes }, () => this.emptySet());
    this.wildcards = this.emptySet();
    this.stayOnSlash = this.emptySet();
    this.stayOnOther = this.emptySet();
    /** Where the positions a `*` dominates begin: after the last `/` or `**`. */
    let segmentStart = 0;
    items.forEach((item, position) => {
      if (item >= 0) {
        setBit(this.advance[charClasses.get(item)!]!, position);
        if (item === SLASH) segmentStart = position + 1;
        return;
      }
      setBit(this.wildcards, position);
      setBit(this.stayOnOther, position);
      if (item === ANY) setBit(this.stayOnSlash, position);
      const dominated = this.emptySet();
      for (let before = item === ANY ? 0 : segmentStart; before < position; before++) setBit(dominated, before);
      this.dominated.set(position, dominated);
      const end = items.findIndex((next, at) => at > position && next < 0);
      const text = String.fromCharCode(...items.slice(position + 1, end === -1 ? items.length : end));
      this.textAfter.set(position, text === '' ? null : this.slotOf(text));
      if (item === ANY) segmentStart = position + 1;
    });
    this.slotOf('/');
    this.nextOccurrence = new Int32Array(this.texts.length);
    this.built = this.emptySet();
    // A state's row in the table, its set, its key (as long as its set) and its entries in the maps and lists.
    const stateBytes = 4 * this.classes + 8 * this.words + 200;
    this.maxStates = Math.max(4, Math.floor(MAX_AUTOMATON_BYTES / stateBytes));
    this.grow(Math.min(this.maxStates, 16));
    const start = this.emptySet();
    setBit(start, 0);
    this.closed(start);
    this.pruned(start);
    this.intern(this.emptySet());
    this.intern(start);
  }

  matches(path: string): boolean {
    const { classes, asciiClass } = this;
    let { table, waiting } = this;
    this.nextOccurrence.fill(-1);
    let state = START;
    /** For how many characters the state has held. */
    let held = 0;
    let at = 0;
    while (at < path.length) {
      const code = path.charCodeAt(at++);
      let next = table[state * classes + (code < 128 ? asciiClass[code]! : this.classOf(code))]!;
      if (next === state) {
        if (++held === SEARCH_AFTER_HELD && waiting[state] === 1) at = this.afterWait(state, path, at);
        continue;
      }
      if (next <= DEAD) {
        if (next === DEAD) return false;
        next = this.build(state, this.classOf(code));
        if (next === NO_ROOM) return this.matchesAfter(this.built.slice(), path, at);
        ({ table, waiting } = this);
        if (next === DEAD) return false;
      }
      state = next;
      held = 0;
    }
    return this.accepting[state]!;
  }

  /**
   * Whether the rest of the path from `at` on takes the glob from this set to its end, a set step a character (no state
   * made).
   */
  private matchesAfter(set: Uint32Array, path: string, at: number): boolean {
    let current = set;
    let next = this.emptySet();
    for (; at < path.length; at++) {
      if (!this.step(current, this.classOf(path.charCodeAt(at)), next)) return false;
      [current, next] = [next, current];
    }
    return hasBit(current, this.items.length);
  }

  /** Where the path next holds a text the waiting state waits for, from `at` on (its length if nowhere). */
  private afterWait(state: number, path: string, at: number): number {
    const slots = this.waits[state]!;
    const { nextOccurrence, texts } = this;
    let first = path.length;
    for (let index = 0; index < slots.length; index++) {
      const slot = slots[index]!;
      let next = nextOccurrence[slot]!;
      if (next < at) {
        next = path.indexOf(texts[slot]!, at);
        nextOccurrence[slot] = next = next === -1 ? path.length : next;
      }
      if (next < first) first = next;
    }
    return first;
  }

  private slotOf(text: string): number {
    let slot = this.slotOfText.get(text);
    if (slot === undefined) {
      slot = this.texts.push(text) - 1;
      this.slotOfText.set(text, slot);
    }
    return slot;
  }

  private classOf(code: number): number {
    return code < 128 ? this.asciiClass[code]! : (this.otherClass.get(code) ?? OTHER_CLASS);
  }

  private emptySet(): Uint32Array {
    return new Uint32Array(this.words);
  }

  /** Room for this many states (those made so far kept). */
  private grow(states: number): void {
    const table = new Int32Array(states * this.classes).fill(UNKNOWN);
    const sets = new Uint32Array(states * this.words);
    const waiting = new Uint8Array(states);
    if (this.states > 0) {
      table.set(this.table);
      sets.set(this.sets);
      waiting.set(this.waiting);
    }
    this.table = table;
    this.sets = sets;
    this.waiting = waiting;
  }

  /**
   * The state after `from` on a character of `charClass`, recorded in the table; NO_ROOM
   * when it is a new one and the automaton is full (its set is then in `built`).
   */
  private build(from: number, charClass: number): number {
    const next = this.built;
    this.step(this.sets.subarray(from * this.words, (from + 1) * this.words), charClass, next);
    this.pruned(next);
    const key = keyOf(next);
    if (!this.ids.has(key) && this.states >= this.maxStates) return NO_ROOM;
    const to = this.intern(next.slice(), key);
    this.table[from * this.classes + charClass] = to;
    return to;
  }

  /** Writes the set after `set` on a character of `charClass` to `next`; false when it is empty. */
  private step(set: Uint32Array, charClass: number, next: Uint32Array): boolean {
    const advance = this.advance[charClass]!;
    const stay = charClass === SLASH_CLASS ? this.stayOnSlash : this.stayOnOther;
    let carry = 0;
    for (let word = 0; word < this.words; word++) {
      const moved = set[word]! & advance[word]!;
      next[word] = (moved << 1) | carry | (set[word]! & stay[word]!);
      carry = moved >>> 31;
    }
    return this.closed(next);
  }

  /** Adds the positions after its wildcards to the set (a wildcard may take nothing); false when it is empty. */
  private closed(set: Uint32Array): boolean {
    const { wildcards } = this;
    let carry = 0;
    let any = 0;
    for (let word = 0; word < this.words; word++) {
      const before = set[word]! & wildcards[word]!;
      set[word] = set[word]! | (before << 1) | carry;
      carry = before >>> 31;
      any |= set[word]!;
    }
    return any !== 0;
  }

  /** Drops the positions of the set that others in it dominate. */
  private pruned(set: Uint32Array): void {
    for (const [position, dominated] of this.dominated) {
      if (!hasBit(set, position)) continue;
      for (let word = 0; word < this.words; word++) set[word]! &= ~dominated[word]!;
    }
  }

  /** The state of this set, made if new. */
  private intern(set: Uint32Array, key = keyOf(set)): number {
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const id = this.states++;
    if (id >= this.waiting.length) this.grow(Math.min(this.maxStates, 2 * id));
    this.sets.set(set, id * this.words);
    this.accepting.push(hasBit(set, this.items.length));
    const waits = this.waitsOf(set);
    this.waits.push(waits);
    this.waiting[id] = waits === null ? 0 : 1;
    this.ids.set(key, id);
    return id;
  }

  /**
   * The texts a set waits for when it is made of wildcards and the positions right after them
   * (none when it ends with `**`: it matches whatever follows); null for any other set.
   */
  private waitsOf(set: Uint32Array): Int32Array | null {
    const waits = new Set<number>();
    const { items } = this;
    for (let position = 0; position <= items.length; position++) {
      if (!hasBit(set, position)) continue;
      const item = items[position];
      if (item !== undefined && item < 0) {
        const after = this.textAfter.get(position)!;
        if (after !== null) waits.add(after);
        if (item === SEGMENT) waits.add(this.slotOf('/'));
      } else if (position === 0 || !hasBit(set, position - 1) || items[position - 1]! >= 0) {
        return null;
      }
    }
    return Int32Array.from(waits);
  }
}

/** A set as a text (two characters a word), to find its state by. */
const keyOf = (set: Uint32Array): string =>
  String.fromCharCode(...new Uint16Array(set.buffer, set.byteOffset, set.length * 2));

const setBit = (set: Uint32Array, position: number) => (set[position >>> 5]! |= 1 << (position & 31));
const hasBit = (set: Uint32Array, position: number) => (set[position >>> 5]! & (1 << (position & 31))) !== 0;

/** A test of paths against a glob, in time linear in the path's length (see GlobAutomaton). */
export function globMatcher(glob: string): (path: string) => boolean {
  const items = globItems(glob);
  if (items.every((item) => item >= 0)) return (path) => path === glob;
  const automaton = new GlobAutomaton(items);
  return (path) => automaton.matches(path);
}
