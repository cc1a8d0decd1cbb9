/**
 * Look-ups by key that tend to arrive together (the first statuses of a
 * reconnecting fleet, each device asking for its own rows) go to the
 * database as one statement per batch: a GroupCommit whose `query` reads the
 * rows of every key at once and whose callers each get their own key's rows
 * back (an empty list when it has none).
 */
import { GroupCommit } from "./group-commit.ts";

export function batchLookup<R>(
  query: (keys: string[]) => Promise<R[]>,
  keyOf: (row: R) => string | null,
  maxBatch = 500,
): GroupCommit<string, R[]> {
  return new GroupCommit<string, R[]>(async (keys) => {
    const by = new Map<string, R[]>(keys.map((k) => [k, []]));
    for (const row of await query([...new Set(keys)])) {
      const key = keyOf(row);
      if (key !== null) by.get(key)?.push(row);
    }
    return keys.map((k) => by.get(k)!);
  }, maxBatch);
}
