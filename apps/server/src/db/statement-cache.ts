/**
 * The prepared statements of one connection, by their text, at most `limit`,
 * the least recently used evicted first (db/prepared-client.ts for PostgreSQL,
 * db/pglite-prepared.ts for PGlite).
 *
 * A statement's text is long (a tunnel list's is about 20 KB) and a new string
 * at every execution, so a Map keyed by the text hashed all of it each time
 * (about 55 µs for 10 KB), and keeping the Map's order as the use order took
 * three look-ups (get, delete, set). Here a text is found by its length and
 * compared whole with the few kept texts of that length (a memory compare),
 * and a use is a counter: the least recently used is found by a scan of the
 * kept statements, only when a new one overflows them.
 */
export class StatementCache<T> {
  readonly #byLength = new Map<number, Entry<T>[]>();
  #size = 0;
  #uses = 0;

  constructor(readonly limit: number) {}

  get size(): number {
    return this.#size;
  }

  /** The statement kept for this text, marked as the most recently used. */
  get(text: string): T | undefined {
    const entry = this.#byLength.get(text.length)?.find((e) => e.text === text);
    if (entry === undefined) return undefined;
    entry.used = ++this.#uses;
    return entry.value;
  }

  /** Keeps a statement for a text it does not hold; answers the one evicted to stay within `limit`, if any. */
  add(text: string, value: T): T | undefined {
    const entry = { text, value, used: ++this.#uses };
    const same = this.#byLength.get(text.length);
    if (same) same.push(entry);
    else this.#byLength.set(text.length, [entry]);
    return ++this.#size > this.limit ? this.#evictOldest() : undefined;
  }

  values(): T[] {
    return [...this.#byLength.values()].flatMap((same) => same.map((e) => e.value));
  }

  clear(): void {
    this.#byLength.clear();
    this.#size = 0;
  }

  #evictOldest(): T | undefined {
    let oldest: Entry<T> | undefined;
    for (const same of this.#byLength.values()) for (const e of same) if (!oldest || e.used < oldest.used) oldest = e;
    if (!oldest) return undefined;
    const same = this.#byLength.get(oldest.text.length)!;
    same.splice(same.indexOf(oldest), 1);
    if (same.length === 0) this.#byLength.delete(oldest.text.length);
    this.#size--;
    return oldest.value;
  }
}

interface Entry<T> {
  readonly text: string;
  readonly value: T;
  used: number;
}
