/** The API's `filter` query parameter: a JSON array of {key, op, val}, ANDed. */
export interface Filter {
  key: string;
  op: "==" | "!=" | "contains" | "!contains" | "<" | ">" | "<=" | ">=" | "in";
  val: unknown;
}

/** The parameter for `filters`, or undefined when there are none (the API then takes everything). */
export function filterParam(filters: Filter[]): string | undefined {
  return filters.length === 0 ? undefined : JSON.stringify(filters);
}
