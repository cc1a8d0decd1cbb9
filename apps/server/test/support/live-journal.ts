/** Reading the live-event journal (`live_events`) in tests: where it ends now, and what came after. */
import type { Db } from "../../src/db/schema.ts";

/** The id of the newest journaled event ("0" when there is none): read before a change, compare after. */
export async function lastEventId(db: Db): Promise<string> {
  const row = await db
    .selectFrom("live_events")
    .select((eb) => eb.fn.coalesce(eb.fn.max("id"), eb.val(0)).as("max"))
    .executeTakeFirstOrThrow();
  return String(row.max);
}
