/**
 * Which tier answers which part of a range: a query at a tier reads that
 * tier up to where its roll-up has got, then the next finer tier up to its
 * own mark, then raw rows, so the latest minutes and the open hour are there
 * too. Each piece is a half-open [from, to) range; empty ones are left out.
 */
import type { TierName } from "./settings.ts";

export type Piece = { tier: TierName; from: Date; to: Date };

export function tierPieces(tier: TierName, marks: { minute: Date | null; hour: Date | null }, from: Date, to: Date): Piece[] {
  const pieces: Piece[] = [];
  let cursor = from;
  const take = (t: TierName, until: Date | null) => {
    const end = until === null ? cursor : new Date(Math.min(to.getTime(), until.getTime()));
    if (end > cursor) {
      pieces.push({ tier: t, from: cursor, to: end });
      cursor = end;
    }
  };
  if (tier === "1h") take("1h", marks.hour);
  if (tier !== "raw") take("1m", marks.minute);
  take("raw", to);
  return pieces;
}
