/**
 * A flush's text built a slice of rows at a time, with a turn of the event
 * loop between slices (issue 14). At 10,000 devices a flush every half second
 * turned about 2,000 samples, 2,000 latest values and 500 device states into
 * JSON and COPY text in one go: a median 11 ms, up to 36 ms, during which no
 * device socket was read and no pong went out (a CPU profile of
 * `server-devices` at rest); a backlog pass of 50,000 samples held the loop
 * 113–262 ms. In slices, the sockets are read between them; the text is the
 * same.
 */
import { setImmediate as nextTurn } from "node:timers/promises";

/** Rows per slice: well under a millisecond of JSON or COPY text each. */
export const SLICE_ROWS = 200;

/** `JSON.stringify(rows)`, the same text, stringified `perSlice` rows at a time with a turn of the loop between. */
export async function jsonArrayInSlices(rows: readonly unknown[], perSlice = SLICE_ROWS): Promise<string> {
  const parts: string[] = [];
  // Each slice's array without its brackets: joined with commas they are the whole array's elements.
  for await (const part of textInSlices(rows, (slice) => JSON.stringify(slice).slice(1, -1), perSlice)) parts.push(part);
  return `[${parts.join(",")}]`;
}

/** `render` of `perSlice` rows at a time, a turn of the loop before each slice after the first. */
export async function* textInSlices<T>(
  rows: readonly T[],
  render: (slice: readonly T[]) => string,
  perSlice = SLICE_ROWS,
): AsyncGenerator<string> {
  for (let i = 0; i < rows.length; i += perSlice) {
    if (i > 0) await nextTurn();
    yield render(rows.slice(i, i + perSlice));
  }
}
