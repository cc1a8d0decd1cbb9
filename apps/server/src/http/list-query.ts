/**
 * The list conventions of every list route, in SQL: a per-route whitelist of
 * filter and sort keys (dotted keys allowed, e.g. `device.name`) mapped to SQL
 * expressions; filters become WHERE, sort becomes ORDER BY, paging LIMIT/OFFSET,
 * and the total of the filtered set (an uncorrelated count in the same statement)
 * goes into the `records-total` header.
 */
import { type Filter, type FilterOp, ListQuery, ListQueryRaw, RECORDS_TOTAL_HEADER } from "@tern/protocol";
import type { Context } from "hono";
import {
  type Compilable,
  type Expression,
  type Kysely,
  type RawBuilder,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema.ts";
import { invalidField } from "./errors.ts";
import { KEPT_TOTAL_KEY_MAX, keptTotalsOf } from "./kept-totals.ts";

/** `tags`: a text[] column; `contains` = has the tag, `in` = has any of the tags (GIN-indexable `@>` / `&&`). */
export type ListFieldType = "text" | "number" | "boolean" | "timestamp" | "uuid" | "tags";

/** A SQL column reference ("o.name") or any SQL expression. */
export type ListColumn = string | RawBuilder<unknown>;

export interface ListField {
  /** Several columns: the filter matches when any of them does (e.g. either end of a tunnel). */
  column: ListColumn | ListColumn[];
  type: ListFieldType;
  /** Default true; false for keys that may be filtered but not sorted on (or the other way). */
  sortable?: boolean;
  filterable?: boolean;
  /**
   * For keys on the elements of a list inside a row (e.g. `interfaces.IPv4`
   * over a jsonb array): a FROM item yielding one row per element, such as
   * sql`jsonb_array_elements(d.interfaces) as e`, with `column` reading the
   * element (sql`e->>'IPv4'`). The filter matches when some element matches;
   * the negated ops (`!=`, `!contains`) when no element does. Not sortable.
   */
  elements?: RawBuilder<unknown>;
  /**
   * Default true; false for a key whose value the list's row version does not follow (a sub-query on another
   * table): a filter on it is counted at every request (http/kept-totals.ts).
   */
  keepsTotal?: boolean;
}

export interface ListSpec {
  /** Public key (as clients write it) → SQL. Only these keys can be filtered and sorted. */
  fields: Record<string, ListField>;
  /** Sort when the query names none. */
  defaultSort: { key: string; order: "asc" | "desc" };
  /** A unique column appended to every ORDER BY so paging is stable. */
  tiebreaker: string;
}

const shape = ListQueryRaw.shape;
/** Query schema of a list route (documented); a route with parameters of its own uses `ListQuerySchema.extend({...})`. */
export const ListQuerySchema = ListQueryRaw.extend({
  offset: shape.offset.meta({ description: "Items to skip (default 0)" }),
  limit: shape.limit.meta({ description: "Items to return, at most 1000 (default 100)" }),
  sort: shape.sort.meta({ description: "Key to sort by (see the route's keys); default per route" }),
  sortField: shape.sortField.meta({ description: "Alias of sort" }),
  order: shape.order.meta({ description: "asc (default) or desc" }),
  sortOrder: shape.sortOrder.meta({ description: "Alias of order" }),
  filter: shape.filter.meta({
    description:
      'JSON array of {key, op, val}; ops == != contains !contains < > <= >= in (in takes an array), e.g. [{"key":"name","op":"contains","val":"branch"}]. Filters are ANDed.',
  }),
  filters: shape.filters.meta({ description: "Alias of filter" }),
});

/**
 * Keyset (cursor) paging beside offset, for the large lists (devices, tunnels, jobs, notifications): add
 * to a route's query schema; the route answers the cursor of its next page in the `records-next` header.
 */
export const AfterParam = {
  after: z.string().min(1).max(2000).optional().meta({
    description:
      "Cursor from the `records-next` header of the previous page: the page after it, with the same sort, order and filter (keyset paging: it stays fast deep into a large list and does not skip or repeat items when items are added or removed before it). Not together with offset. records-total is still the whole filtered set.",
  }),
};

/** A list query as the server runs it: the protocol's, and a keyset cursor where the route offers one. */
export type ServerListQuery = ListQuery & { after?: string | undefined };

/** Folds the aliases (sortField, sortOrder, filters) like the protocol's ListQuery does. */
export function foldListQuery(raw: z.output<typeof ListQueryRaw> & { after?: string | undefined }): ServerListQuery {
  return {
    offset: raw.offset,
    limit: raw.limit,
    sort: raw.sort ?? raw.sortField,
    order: raw.order ?? raw.sortOrder ?? "asc",
    filter: [...(raw.filter ?? []), ...(raw.filters ?? [])],
    ...(raw.after !== undefined ? { after: raw.after } : {}),
  };
}

const UUID = z.uuid();
type Scalar = string | number | boolean | null;

function refOf(column: ListColumn): RawBuilder<unknown> {
  return typeof column === "string" ? sql.ref(column) : column;
}

/** Converts one filter value to the field's type, or throws a 400 naming the filter. */
function convert(value: Scalar, field: ListField, path: string): string | number | boolean | Date | null {
  if (value === null) return null;
  const bad = (what: string) => invalidField(path, `must be ${what}`);
  switch (field.type) {
    case "tags":
    case "text":
      if (typeof value === "boolean") throw bad("text");
      return String(value);
    case "number": {
      const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
      if (!Number.isFinite(n)) throw bad("a number");
      return n;
    }
    case "boolean":
      if (typeof value === "boolean") return value;
      if (value === "true" || value === "false") return value === "true";
      throw bad("true or false");
    case "timestamp": {
      const d = new Date(typeof value === "number" ? value : String(value));
      if (typeof value === "boolean" || Number.isNaN(d.getTime())) throw bad("a date-time (ISO 8601) or epoch milliseconds");
      return d;
    }
    case "uuid":
      if (typeof value !== "string" || !UUID.safeParse(value).success) throw bad("an id (UUID)");
      return value;
  }
}

const ORDERED_OPS: FilterOp[] = ["<", ">", "<=", ">="];

/** Whether some character of the text has another case (then `contains` must fold case). */
function hasCase(text: string): boolean {
  return text.toLowerCase() !== text || text.toUpperCase() !== text;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/** The condition of a filter on one column, for the positive ops (negations wrap these). */
function positive(
  ref: RawBuilder<unknown>,
  op: FilterOp,
  field: ListField,
  val: Filter["val"],
  path: string,
): RawBuilder<SqlBool> {
  if (field.type === "tags") return tagCondition(ref, op, field, val, path);
  if (op === "contains") {
    if (field.type !== "text" && field.type !== "uuid") throw invalidField(`${path}.op`, `'contains' needs a text field`);
    if (typeof val !== "string" && typeof val !== "number") throw invalidField(`${path}.val`, "must be text");
    const text = String(val);
    const pattern = `%${escapeLike(text)}%`;
    // Text without case (digits, dots, dashes: a serial, an address) matches the same rows with LIKE as with
    // ILIKE, and LIKE does not fold every row's case: about a third of the cost of a count over 10,000 names.
    return hasCase(text)
      ? sql<SqlBool>`cast(${ref} as text) ilike ${pattern}`
      : sql<SqlBool>`cast(${ref} as text) like ${pattern}`;
  }
  if (op === "in") {
    const values = (val as Scalar[]).map((v, i) => convert(v, field, `${path}.val.${i}`));
    const present = values.filter((v) => v !== null);
    const parts: RawBuilder<SqlBool>[] = [];
    if (present.length) parts.push(sql<SqlBool>`${ref} in (${sql.join(present)})`);
    if (present.length < values.length) parts.push(sql<SqlBool>`${ref} is null`);
    return parts.length ? sql<SqlBool>`(${sql.join(parts, sql` or `)})` : sql<SqlBool>`false`;
  }
  const value = convert(val as Scalar, field, `${path}.val`);
  if (op === "==") return value === null ? sql<SqlBool>`${ref} is null` : sql<SqlBool>`${ref} = ${value}`;
  if (ORDERED_OPS.includes(op)) {
    if (field.type === "boolean" || field.type === "uuid")
      throw invalidField(`${path}.op`, `'${op}' does not apply to a ${field.type} field`);
    if (value === null) throw invalidField(`${path}.val`, `'${op}' needs a value`);
    return sql<SqlBool>`${ref} ${sql.raw(op)} ${value}`;
  }
  throw new Error(`unhandled filter op ${op}`);
}

/**
 * A filter on a tag array: `contains` (the row has the tag, exactly), `in` (any of the tags), and
 * their negations through filterCondition; `==` with null matches rows without tags.
 */
function tagCondition(
  ref: RawBuilder<unknown>,
  op: FilterOp,
  field: ListField,
  val: Filter["val"],
  path: string,
): RawBuilder<SqlBool> {
  if (op === "contains") {
    const tag = convert(val as Scalar, field, `${path}.val`);
    if (typeof tag !== "string") throw invalidField(`${path}.val`, "must be a tag");
    return sql<SqlBool>`${ref} @> array[${tag}]::text[]`;
  }
  if (op === "in") {
    const tags = (val as Scalar[]).map((v, i) => convert(v, field, `${path}.val.${i}`));
    if (tags.some((t) => typeof t !== "string")) throw invalidField(`${path}.val`, "must be tags");
    if (tags.length === 0) return sql<SqlBool>`false`;
    return sql<SqlBool>`${ref} && array[${sql.join(tags)}]::text[]`;
  }
  if (op === "==" && val === null) return sql<SqlBool>`cardinality(${ref}) = 0`;
  throw invalidField(`${path}.op`, "tags take 'contains' (has the tag), '!contains', 'in' (has any) or '== null' (no tags)");
}

/** The field a key names: own keys of the spec only, so `toString` or `__proto__` is an unknown key, not Object.prototype's. */
function fieldOf(spec: ListSpec, key: string): ListField | undefined {
  return Object.hasOwn(spec.fields, key) ? spec.fields[key] : undefined;
}

const NEGATION: Partial<Record<FilterOp, FilterOp>> = { "!=": "==", "!contains": "contains" };

/** One filter → one SQL condition. Negated ops are "no column matches", so NULLs count as not matching. */
export function filterCondition(filter: Filter, spec: ListSpec, index: number): Expression<SqlBool> {
  const path = `filter.${index}`;
  const field = fieldOf(spec, filter.key);
  if (!field || field.filterable === false) {
    const allowed = Object.entries(spec.fields)
      .filter(([, f]) => f.filterable !== false)
      .map(([k]) => k);
    throw invalidField(`${path}.key`, `unknown filter key "${filter.key}"; allowed: ${allowed.join(", ")}`);
  }
  const columns = Array.isArray(field.column) ? field.column : [field.column];
  const base = NEGATION[filter.op] ?? filter.op;
  const any = sql.join(
    columns.map((col) => positive(refOf(col), base, field, filter.val, path)),
    sql` or `,
  );
  if (field.elements) {
    const some = sql<SqlBool>`exists (select 1 from ${field.elements} where ${any})`;
    return base === filter.op ? some : sql<SqlBool>`not ${some}`;
  }
  return base === filter.op ? sql<SqlBool>`(${any})` : sql<SqlBool>`not coalesce((${any}), false)`;
}

/**
 * Applies filters, sort and paging to `query` and counts the filtered rows.
 * `query` must already be scoped to the organization. `count` is how the total is had more cheaply:
 * - `total`: the number of rows of `query` without `list`'s filters, read from elsewhere (db/row-counts.ts); used
 *   only when `list` has no filter, and the caller gives it only when `query` is the organization's whole table;
 * - `from`: the same rows without the joins that only add columns (same aliases, same scope), counted there with
 *   the same filters. PostgreSQL drops such a left join from the count by itself, but still takes the join's
 *   column as needed, which rules out an index-only scan (the jobs' count read every job row: 2.1 ms against
 *   1.3 ms at 20,000);
 * - `version`: the version of the rows `query` reads (db/row-counts.ts `rowVersion`): a filtered total is kept
 *   between requests and counted again only when the version moved (`keptCount`).
 */
export async function runList<DB, TB extends keyof DB, O, CDB = DB, CTB extends keyof CDB = keyof CDB, CO = unknown>(
  db: Kysely<Database>,
  query: SelectQueryBuilder<DB, TB, O>,
  list: ServerListQuery,
  spec: ListSpec,
  count: ListCount<CDB, CTB, CO> = {},
): Promise<{ rows: O[]; total: number; next: string | null }> {
  const statement = listStatement(db, query, list, spec, count);
  const rows = (await statement.page.execute()) as (O & Record<string, unknown>)[];
  if (rows.length === 0 && (list.offset > 0 || list.limit === 0 || list.after !== undefined))
    return { rows: [], ...(await statement.countAlone()) };
  const total = Number(rows[0]?.[TOTAL_COLUMN] ?? 0);
  statement.kept?.keep(rows[0]?.[VERSION_COLUMN] as string | undefined, total);
  const last = rows.at(-1);
  const next = rows.length === list.limit && last ? statement.nextCursor(last[SORT_VALUE_COLUMN], last[SORT_ID_COLUMN]) : null;
  return { rows: rows.map(withoutListColumns) as O[], total, next };
}

/**
 * The same page as `runList` for a query whose one column, `json`, is each row's JSON text: the database joins
 * the page's rows into the JSON text of the answer's array (in the page's order) and hands back one row with
 * the total and the last row's keyset. The server then neither parses a hundred rows of five columns nor
 * keeps them (at 50 concurrent clients the rows' objects and strings, alive while their requests wait, were
 * most of what the garbage collector copied), nor joins their text.
 */
export async function runListJson<DB, TB extends keyof DB, CDB = DB, CTB extends keyof CDB = keyof CDB, CO = unknown>(
  db: Kysely<Database>,
  query: SelectQueryBuilder<DB, TB, { json: string }>,
  list: ServerListQuery,
  spec: ListSpec,
  count: ListCount<CDB, CTB, CO> = {},
): Promise<{ json: string; total: number; next: string | null }> {
  const statement = listStatement(db, query, list, spec, count);
  const { order, reverse } = statement;
  const byPage = sql`p.${sql.ref(SORT_VALUE_COLUMN)} ${order}, p.${sql.ref(SORT_ID_COLUMN)} ${statement.idOrder}`;
  const lastFirst = sql`p.${sql.ref(SORT_VALUE_COLUMN)} ${reverse}, p.${sql.ref(SORT_ID_COLUMN)} ${statement.idReverse}`;
  const result = await sql<{
    json: string;
    n: number;
    total: number | null;
    sort_value: unknown;
    sort_id: unknown;
    version: string | null;
  }>`
    select '[' || coalesce(string_agg(p.json::text, ',' order by ${byPage}), '') || ']' as json, count(*)::int as n,
      min(p.${sql.ref(TOTAL_COLUMN)}) as total, min(p.${sql.ref(VERSION_COLUMN)}) as version,
      (array_agg(p.${sql.ref(SORT_VALUE_COLUMN)} order by ${lastFirst}))[1] as sort_value,
      (array_agg(p.${sql.ref(SORT_ID_COLUMN)} order by ${lastFirst}))[1] as sort_id
    from (${statement.page}) as p`.execute(db);
  const row = result.rows[0]!;
  if (row.n === 0 && (list.offset > 0 || list.limit === 0 || list.after !== undefined))
    return { json: "[]", ...(await statement.countAlone()) };
  const total = Number(row.total ?? 0);
  statement.kept?.keep(row.version, total);
  const next = row.n === list.limit && row.n > 0 ? statement.nextCursor(row.sort_value, row.sort_id) : null;
  return { json: row.json, total, next };
}

/** How `runList` has the total more cheaply than by counting the filtered rows (runList's comment). */
export interface ListCount<CDB, CTB extends keyof CDB, CO> {
  total?: RawBuilder<number>;
  from?: SelectQueryBuilder<CDB, CTB, CO>;
  version?: RawBuilder<string>;
}

/**
 * The page statement of a list: filters, keyset, sort, limit and offset, with the list's own columns (the
 * total, the sort value and tiebreaker, the kept total's version) after the query's.
 */
function listStatement<DB, TB extends keyof DB, O, CDB, CTB extends keyof CDB, CO>(
  db: Kysely<Database>,
  query: SelectQueryBuilder<DB, TB, O>,
  list: ServerListQuery,
  spec: ListSpec,
  count: ListCount<CDB, CTB, CO>,
) {
  const filtered = withFilters(query, list, spec);
  const countedRows = count.from ? countable(withFilters(count.from, list, spec)) : countable(filtered);

  const sortKey = list.sort ?? spec.defaultSort.key;
  const sortField = fieldOf(spec, sortKey);
  if (!sortField || sortField.sortable === false || sortField.elements || sortField.type === "tags") {
    const allowed = Object.entries(spec.fields)
      .filter(([, f]) => f.sortable !== false && !f.elements && f.type !== "tags")
      .map(([k]) => k);
    throw invalidField("sort", `cannot sort by "${sortKey}"; allowed: ${allowed.join(", ")}`);
  }
  const order = list.sort ? list.order : spec.defaultSort.order;
  const sortColumn = Array.isArray(sortField.column) ? sortField.column[0]! : sortField.column;
  const sortRef = refOf(sortColumn);
  const tiebreaker = sql.ref(spec.tiebreaker);
  const direction = sql.raw(order === "desc" ? "desc nulls last" : "asc nulls first");
  const idOrder = sql.raw(order === "desc" ? "desc" : "asc");

  let paged = filtered;
  if (list.after !== undefined) {
    if (list.offset > 0) throw invalidField("after", "give either after or offset, not both");
    const cursor = decodeCursor(list.after, sortKey, order, sortField);
    paged = paged.where(afterCondition(sortRef, tiebreaker, order, cursor));
  }

  // The total rides along as an uncorrelated sub-query: PostgreSQL counts the filtered rows once (an
  // InitPlan that selects nothing but the filter's rows) and the page query reads only the page's rows, in
  // index order where an index serves the sort, computing their select list (correlated sub-queries, jsonb)
  // for them alone. One statement per list, as before; `count(*) over ()` instead made PostgreSQL compute
  // every filtered row's select list before LIMIT (most of a list request's time at 10,000 rows).
  const counting = sql<number>`(select count(*)::int from (${countedRows}) as filtered)`;
  const unfilteredTotal = list.filter.length === 0 ? count.total : undefined;
  const kept = unfilteredTotal ? undefined : keptCount(db, countedRows, counting, list, spec, count.version);
  const counted = unfilteredTotal ?? kept?.counted ?? counting;
  const page = paged
    .orderBy(sql`${sortRef} ${direction}`)
    .orderBy(sql`${tiebreaker} ${idOrder}`)
    .limit(list.limit)
    .offset(list.offset)
    .select([
      counted.as(TOTAL_COLUMN),
      sql`${sortRef}`.as(SORT_VALUE_COLUMN),
      sql`${tiebreaker}`.as(SORT_ID_COLUMN),
      (kept ? sql<string>`${kept.version}::text` : sql<string>`null::text`).as(VERSION_COLUMN),
    ]);
  return {
    page,
    kept,
    order: direction,
    idOrder,
    reverse: sql.raw(order === "desc" ? "asc nulls first" : "desc nulls last"),
    idReverse: sql.raw(order === "desc" ? "asc" : "desc"),
    /** No row to carry the total (a page past the end, or limit=0): counted on its own. */
    async countAlone(): Promise<{ total: number; next: null }> {
      const alone = await sql<{ total: number; version: string | null }>`select ${counted} as total,
        ${kept ? sql`${kept.version}::text` : sql`null`} as version`.execute(db);
      const total = Number(alone.rows[0]?.total ?? 0);
      kept?.keep(alone.rows[0]?.version, total);
      return { total, next: null };
    },
    /** The cursor of the page after the one whose last row has this sort value and tiebreaker. */
    nextCursor(value: unknown, id: unknown): string {
      return encodeCursor({ k: sortKey, o: order, v: cursorValue(value), i: String(id) });
    },
  };
}

/**
 * A filtered total kept between requests (http/kept-totals.ts), when the list has a row version, every filter
 * key follows it, and the statement runs outside a transaction: `counted` answers the kept total while the
 * version is the one it was counted at (PostgreSQL runs `counting` only when its value is needed) and counts
 * otherwise; `keep` stores what the statement found.
 */
function keptCount(
  db: Kysely<Database>,
  countedRows: Compilable,
  counting: RawBuilder<number>,
  list: ServerListQuery,
  spec: ListSpec,
  version: RawBuilder<string> | undefined,
) {
  if (!version || list.filter.some((f) => fieldOf(spec, f.key)?.keepsTotal === false)) return undefined;
  const totals = keptTotalsOf(db);
  if (!totals) return undefined;
  const compiled = countedRows.compile();
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  if (key.length > KEPT_TOTAL_KEY_MAX) return undefined;
  const known = totals.get(key);
  return {
    version,
    counted: known
      ? sql<number>`(case when ${version} = ${known.version}::numeric then ${known.total}::int else ${counting} end)`
      : counting,
    keep(seen: string | null | undefined, total: number) {
      if (typeof seen === "string") totals.set(key, { version: seen, total });
    },
  };
}

/** A keyset cursor: the sort key and order it was made for, and the last row's sort value and tiebreaker. */
interface Cursor {
  k: string;
  o: "asc" | "desc";
  v: string | number | boolean | null;
  i: string;
}

function cursorValue(value: unknown): Cursor["v"] {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "string") return value;
  return String(value);
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");
}

const CursorShape = z.strictObject({
  k: z.string(),
  o: z.enum(["asc", "desc"]),
  v: z.union([z.string(), z.number(), z.boolean(), z.null()]),
  i: z.string().min(1).max(200),
});

function decodeCursor(text: string, sortKey: string, order: "asc" | "desc", field: ListField) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  const cursor = CursorShape.safeParse(parsed);
  if (!cursor.success) throw invalidField("after", "not a cursor of this list (use the records-next header of a page)");
  if (cursor.data.k !== sortKey || cursor.data.o !== order)
    throw invalidField("after", `the cursor was made for sort ${cursor.data.k} ${cursor.data.o}: give the same sort and order`);
  return { value: convert(cursor.data.v, field, "after"), id: cursor.data.i };
}

/**
 * Rows after the cursor in the list's order: `asc nulls first` / `desc nulls last`, then the tiebreaker in
 * the same direction (so the row order is total and a page boundary is exact).
 */
function afterCondition(
  sortRef: RawBuilder<unknown>,
  id: RawBuilder<unknown>,
  order: "asc" | "desc",
  cursor: { value: string | number | boolean | Date | null; id: string },
): RawBuilder<SqlBool> {
  const idAfter = order === "asc" ? sql<SqlBool>`${id} > ${cursor.id}` : sql<SqlBool>`${id} < ${cursor.id}`;
  if (cursor.value === null) {
    // Nulls come first ascending (then every non-null), last descending (only nulls follow).
    return order === "asc"
      ? sql<SqlBool>`((${sortRef} is null and ${idAfter}) or ${sortRef} is not null)`
      : sql<SqlBool>`(${sortRef} is null and ${idAfter})`;
  }
  const v = cursor.value;
  return order === "asc"
    ? sql<SqlBool>`(${sortRef} > ${v} or (${sortRef} = ${v} and ${idAfter}))`
    : sql<SqlBool>`(${sortRef} < ${v} or (${sortRef} = ${v} and ${idAfter}) or ${sortRef} is null)`;
}

/** The filtered query selecting a constant: what counting needs and nothing more. */
/** `query` with each of the list's filters as a condition. */
function withFilters<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, list: ServerListQuery, spec: ListSpec) {
  return list.filter.reduce((q, f, i) => q.where(filterCondition(f, spec, i)), query);
}

function countable<DB, TB extends keyof DB, O>(filtered: SelectQueryBuilder<DB, TB, O>) {
  return filtered.clearSelect().select(sql`1`.as("one"));
}

/** Columns of the page query that carry the total and the last row's keyset; removed from the rows. */
const TOTAL_COLUMN = "__records_total";
const SORT_VALUE_COLUMN = "__sort_value";
const SORT_ID_COLUMN = "__sort_id";
/** The row version a kept total was counted at (keptCount). */
const VERSION_COLUMN = "__records_version";
const LIST_COLUMNS = new Set([TOTAL_COLUMN, SORT_VALUE_COLUMN, SORT_ID_COLUMN, VERSION_COLUMN]);

/**
 * A page's row without the list's own columns, as a new object: deleting them from the row instead turned
 * every row into a slow dictionary-mode object (about six times the cost, and more garbage).
 */
function withoutListColumns(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in row) if (!LIST_COLUMNS.has(key)) out[key] = row[key];
  return out;
}

/** Response header with the cursor of the next page (keyset paging: `?after=`); absent on the last page. */
export const RECORDS_NEXT_HEADER = "records-next";

/** Sets `records-total` (and `records-next` when the route pages by cursor and there is a next page). */
export function withRecordsTotal(c: Context, total: number, next?: string | null): void {
  c.header(RECORDS_TOTAL_HEADER, String(total));
  if (next) c.header(RECORDS_NEXT_HEADER, next);
}

/** The `records-total` response header, for route declarations. */
export const recordsTotalHeader = z.object({
  [RECORDS_TOTAL_HEADER]: z.string().meta({ description: "Number of items matching the filter, before paging" }),
});

/** `records-total` and `records-next`, for the routes with keyset paging. */
export const recordsPageHeaders = recordsTotalHeader.extend({
  [RECORDS_NEXT_HEADER]: z
    .string()
    .optional()
    .meta({ description: "Cursor of the next page (pass as `after`); absent when this page is the last" }),
});

export { ListQuery };
