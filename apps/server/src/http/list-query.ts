/**
 * The list conventions of every list route, in SQL: a per-route whitelist of
 * filter and sort keys (dotted keys allowed, e.g. `device.name`) mapped to SQL
 * expressions; filters become WHERE, sort becomes ORDER BY, paging LIMIT/OFFSET,
 * and the total of the filtered set (an uncorrelated count in the same statement)
 * goes into the `records-total` header.
 */
import { type Filter, type FilterOp, ListQuery, ListQueryRaw, RECORDS_TOTAL_HEADER } from "@tern/protocol";
import type { Context } from "hono";
import { type Expression, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool, sql } from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema.ts";
import { invalidField } from "./errors.ts";

export type ListFieldType = "text" | "number" | "boolean" | "timestamp" | "uuid";

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

/** Folds the aliases (sortField, sortOrder, filters) like the protocol's ListQuery does. */
export function foldListQuery(raw: z.output<typeof ListQueryRaw>): ListQuery {
  return {
    offset: raw.offset,
    limit: raw.limit,
    sort: raw.sort ?? raw.sortField,
    order: raw.order ?? raw.sortOrder ?? "asc",
    filter: [...(raw.filter ?? []), ...(raw.filters ?? [])],
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
  if (op === "contains") {
    if (field.type !== "text" && field.type !== "uuid") throw invalidField(`${path}.op`, `'contains' needs a text field`);
    if (typeof val !== "string" && typeof val !== "number") throw invalidField(`${path}.val`, "must be text");
    return sql<SqlBool>`cast(${ref} as text) ilike ${`%${escapeLike(String(val))}%`}`;
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
 * `query` must already be scoped to the organization.
 */
export async function runList<DB, TB extends keyof DB, O>(
  db: Kysely<Database>,
  query: SelectQueryBuilder<DB, TB, O>,
  list: ListQuery,
  spec: ListSpec,
): Promise<{ rows: O[]; total: number }> {
  let filtered = query;
  list.filter.forEach((f, i) => {
    filtered = filtered.where(filterCondition(f, spec, i));
  });

  const sortKey = list.sort ?? spec.defaultSort.key;
  const sortField = fieldOf(spec, sortKey);
  if (!sortField || sortField.sortable === false || sortField.elements) {
    const allowed = Object.entries(spec.fields)
      .filter(([, f]) => f.sortable !== false && !f.elements)
      .map(([k]) => k);
    throw invalidField("sort", `cannot sort by "${sortKey}"; allowed: ${allowed.join(", ")}`);
  }
  const order = list.sort ? list.order : spec.defaultSort.order;
  const sortColumn = Array.isArray(sortField.column) ? sortField.column[0]! : sortField.column;
  const direction = sql.raw(order === "desc" ? "desc nulls last" : "asc nulls first");

  const page = filtered
    .orderBy(sql`${refOf(sortColumn)} ${direction}`)
    .orderBy(sql`${sql.ref(spec.tiebreaker)} ${sql.raw(order === "desc" ? "desc" : "asc")}`)
    .limit(list.limit)
    .offset(list.offset);

  // The total rides along as an uncorrelated sub-query: PostgreSQL counts the filtered rows once (an
  // InitPlan that selects nothing but the filter's rows) and the page query reads only the page's rows, in
  // index order where an index serves the sort, computing their select list (correlated sub-queries, jsonb)
  // for them alone. One statement per list, as before; `count(*) over ()` instead made PostgreSQL compute
  // every filtered row's select list before LIMIT (most of a list request's time at 10,000 rows).
  const counted = sql<number>`(select count(*)::int from (${countable(filtered)}) as filtered)`;
  const rows = (await page.select(counted.as(TOTAL_COLUMN)).execute()) as (O & { [TOTAL_COLUMN]?: number })[];
  if (rows.length === 0 && (list.offset > 0 || list.limit === 0)) {
    // No row to carry the total (a page past the end, or limit=0): count on its own.
    const alone = await sql<{ total: number }>`select ${counted} as total`.execute(db);
    return { rows: [], total: Number(alone.rows[0]?.total ?? 0) };
  }
  const total = Number(rows[0]?.[TOTAL_COLUMN] ?? 0);
  for (const row of rows) delete row[TOTAL_COLUMN];
  return { rows, total };
}

/** The filtered query selecting a constant: what counting needs and nothing more. */
function countable<DB, TB extends keyof DB, O>(filtered: SelectQueryBuilder<DB, TB, O>) {
  return filtered.clearSelect().select(sql`1`.as("one"));
}

/** Column of the page query that carries the total; removed from the rows before they are returned. */
const TOTAL_COLUMN = "__records_total";

/** Sets `records-total` and answers with the items. */
export function withRecordsTotal(c: Context, total: number): void {
  c.header(RECORDS_TOTAL_HEADER, String(total));
}

/** The `records-total` response header, for route declarations. */
export const recordsTotalHeader = z.object({
  [RECORDS_TOTAL_HEADER]: z.string().meta({ description: "Number of items matching the filter, before paging" }),
});

export { ListQuery };
