/**
 * One instance for equal strings that live as long as a device's link: ids,
 * names and keys read from database rows or status messages. Every row and
 * every parsed message makes strings of its own, so the same tunnel id was
 * held by the link's tunnel sides, the rule engine's context and the healing
 * monitor in copies of its own: at 10,000 devices 230,000 UUID strings for
 * 68,000 distinct ids, 12.6 MB (a heap snapshot of `server-devices`).
 *
 * The instance is V8's internalized string: a property key is always one, so
 * the key of a one-property object is the shared instance of its text. V8's
 * string table holds its strings weakly, so nothing here outlives its users
 * (a Map of strings kept as an intern table would keep every id ever seen).
 * About 0.5–1.1 µs a call on the 2-core bench machine (a text seen for the first time costs the most: it is
 * hashed and entered in the table): for state kept per link, not for every status.
 */
export function sharedString(s: string): string;
export function sharedString(s: string | null): string | null;
export function sharedString(s: string | null): string | null {
  if (s === null) return null;
  // A prototype-less object is a dictionary: no hidden class is made for each new key.
  const holder: Record<string, true> = Object.create(null);
  holder[s] = true;
  for (const key in holder) return key;
  return s;
}
