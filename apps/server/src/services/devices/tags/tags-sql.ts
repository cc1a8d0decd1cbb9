/** Tags as a SQL text[] value. */
import { sql } from "kysely";

/**
 * A text[] literal with every element quoted (so a tag spelled NULL stays a tag), passed as one text
 * parameter: the same on the pg driver and PGlite. Tags never hold `"` or `\` (DeviceTag's charset).
 */
export function tagsArray(tags: readonly string[]) {
  return sql<string[]>`${`{${tags.map((t) => `"${t}"`).join(",")}}`}::text[]`;
}
