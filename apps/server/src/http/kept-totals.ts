/**
 * Filtered list totals kept between requests (issue 14). Counting what a
 * filter matches reads every row of the organization's table (a filtered
 * device page of 100 at 10,000 devices: 1.7 ms of the 2.1 ms PostgreSQL
 * spent on it), in every request, though the answer changes only when the
 * rows do. A list keeps the total it counted with the version of the rows it
 * counted (db/row-counts.ts `rowVersion`), by the count's SQL and parameters;
 * the next request with the same count asks the database in its own
 * statement whether the version is still that one, and counts only when it
 * is not (`runList`, http/list-query.ts).
 *
 * Kept per database handle and only for statements outside a transaction:
 * such a statement sees committed changes only, and the version of two
 * snapshots is the same only when they saw the same changes. A transaction
 * sees its own changes too, which may yet roll back.
 */
import { LRUCache } from "lru-cache";

export interface KeptTotal {
  /** `rowVersion` when the total was counted (a bigint, as text). */
  version: string;
  total: number;
}

/**
 * The characters of the keys kept per database handle, at most (about 2 MB): a count's key is its SQL and
 * parameters, a few hundred characters for a filter; the least recently used go first.
 */
export const KEPT_TOTALS_CHARS = 1_000_000;
/**
 * A longer key is not kept: a count scoped by a long list of ids (`?ids=`) reads those rows by their index
 * anyway, and its key would crowd out the filters'.
 */
export const KEPT_TOTAL_KEY_MAX = 4096;

const byDatabase = new WeakMap<object, LRUCache<string, KeptTotal>>();

/** The totals kept for `db`; none inside a transaction. */
export function keptTotalsOf(
  db: { readonly isTransaction: boolean },
  maxChars = KEPT_TOTALS_CHARS,
): LRUCache<string, KeptTotal> | undefined {
  if (db.isTransaction) return undefined;
  let totals = byDatabase.get(db);
  if (!totals) {
    // The entry's own object and the map's slot count as 100 characters.
    totals = new LRUCache<string, KeptTotal>({ maxSize: maxChars, sizeCalculation: (_value, key) => key.length + 100 });
    byDatabase.set(db, totals);
  }
  return totals;
}
