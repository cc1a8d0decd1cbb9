/**
 * One writer at a time under <state>/versions in this process: an install (unpack, rename, `current` switch,
 * marker) and a prune (upgrade/prune.ts) must not interleave, or a prune that listed the directory before an
 * install renamed its version into place could remove it before the pending marker names it. Other processes
 * are kept out by the agent's pid lock (the launcher and the guard only move `current` and the marker).
 */
let tail: Promise<unknown> = Promise.resolve();

/** Runs `fn` after every section started before it ended (whether they failed or not). */
export function withVersionsLock<T>(fn: () => Promise<T>): Promise<T> {
  const run = tail.then(fn, fn);
  tail = run.catch(() => {});
  return run;
}
