/**
 * List conventions shared by every list route: paging, sorting (with the
 * reference's aliases) and JSON filters. The total goes in `records-total`.
 */
import * as z from "zod";

export const FILTER_OPS = ["==", "!=", "contains", "!contains", "<", ">", "<=", ">=", "in"] as const;
export const FilterOp = z.enum(FILTER_OPS);
export type FilterOp = z.infer<typeof FilterOp>;

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const Filter = z
  .strictObject({
    key: z.string().min(1).max(100),
    op: z.enum(FILTER_OPS, { message: `op must be one of ${FILTER_OPS.join(" ")}` }),
    val: z.union([Scalar, z.array(Scalar)]),
  })
  .refine((f) => (f.op === "in") === Array.isArray(f.val), {
    message: "'in' takes an array value and every other op a single value",
    path: ["val"],
  });
export type Filter = z.infer<typeof Filter>;

export const RECORDS_TOTAL_HEADER = "records-total";
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** Parses the `filter`/`filters` query text: a JSON array of {key, op, val}. */
export const FilterParam = z.string().transform((text, ctx) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: "custom", message: "filter must be a JSON array of {key, op, val}" });
    return z.NEVER;
  }
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const result = z.array(Filter).max(20).safeParse(list);
  if (!result.success) {
    for (const issue of result.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  }
  return result.data;
});

const intParam = (def: number, max: number) =>
  z.coerce.number({ message: "must be a whole number" }).int().min(0).max(max).default(def);

/** The raw query of a list route, before the aliases are folded. */
export const ListQueryRaw = z.object({
  offset: intParam(0, Number.MAX_SAFE_INTEGER),
  limit: intParam(DEFAULT_LIMIT, MAX_LIMIT),
  sort: z.string().max(100).optional(),
  sortField: z.string().max(100).optional(),
  order: z.enum(["asc", "desc"]).optional(),
  sortOrder: z.enum(["asc", "desc"]).optional(),
  filter: FilterParam.optional(),
  filters: FilterParam.optional(),
});

/** The list query with aliases folded: `sortField` → `sort`, `sortOrder` → `order`, `filters` → `filter`. */
export const ListQuery = ListQueryRaw.transform((q) => ({
  offset: q.offset,
  limit: q.limit,
  sort: q.sort ?? q.sortField,
  order: q.order ?? q.sortOrder ?? ("asc" as const),
  filter: [...(q.filter ?? []), ...(q.filters ?? [])],
}));
export type ListQuery = z.output<typeof ListQuery>;

export const ResponseType = z.enum(["summary", "detailed"]);
export const DeviceResponseType = z.enum(["summary", "detailed", "ids"]);
