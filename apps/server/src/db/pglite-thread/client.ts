/**
 * The server's side of the embedded database's thread (thread.ts): starts it,
 * sends it statements and hands back their answers. `EmbeddedDatabase` is
 * what the rest of the server uses of PGlite besides statements: LISTEN (the
 * bus) and a dump of the data directory (backups).
 *
 * The worker keeps the process alive only while a request is out: a server
 * holds its sockets open anyway, and a command that forgets to close the
 * database still exits.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { PGliteQuery } from "../pglite-prepared.ts";
import { errorFrom, type QueryAnswer, type Reply, type Request, type ThreadOptions } from "./messages.ts";

export interface EmbeddedDatabase {
  readonly closed: boolean;
  /** Calls `callback` with each NOTIFY payload on `channel`; the answer unsubscribes. */
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  /** The data directory as PGlite's tarball (PGlite.dumpDataDir, uncompressed). */
  dumpDataDir(): Promise<Blob>;
}

export interface PGliteThread extends EmbeddedDatabase {
  /** One statement, as PGlite's query answers it (rows, affectedRows). */
  query: PGliteQuery;
  /** Closes the database (a clean shutdown of its files) and ends the thread. */
  close(): Promise<void>;
}

/** Request types without their id, which `send` gives them. */
type Sent = Request extends infer R ? (R extends Request ? Omit<R, "id"> : never) : never;

/** The thread's young generation (V8's new space), in MB. */
const YOUNG_GENERATION_MB = 8;

/** Where a bundle keeps the thread's code (scripts/bundle.mjs), from its root. */
const BUNDLED = "db/pglite-thread/thread.js";

/**
 * How the thread's code is started. Run from source (tsx, vitest): thread.ts beside this file, through tsx's
 * require hook, since a worker does not take tsx's ESM loader (`--import tsx`) on Node 20. Bundled: the bundle's
 * own entry at db/pglite-thread/thread.js under its root, which is this file's folder or one to three above it
 * (the server's dist/main.js or dist/chunks/*.js; the bench's bench/workers/tern-server.js).
 */
function threadCode(): { code: URL | string; eval: boolean } {
  if (import.meta.url.endsWith(".ts")) {
    const tsx = createRequire(import.meta.url).resolve("tsx/cjs/api");
    const entry = fileURLToPath(new URL("./thread.ts", import.meta.url));
    return { code: `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`, eval: true };
  }
  for (const up of ["./", "../", "../../", "../../../"]) {
    const url = new URL(up + BUNDLED, import.meta.url);
    if (existsSync(url)) return { code: url, eval: false };
  }
  throw new Error(`the embedded database's thread (${BUNDLED}) is missing from the bundle of ${import.meta.url}`);
}

/** Opens the embedded database in a thread of its own; rejects as PGlite.create would. */
export async function startPGliteThread(options: ThreadOptions): Promise<PGliteThread> {
  const code = threadCode();
  const worker = new Worker(code.code, {
    eval: code.eval,
    workerData: options,
    // Its own name in CPU profiles and heap snapshots.
    name: "tern-pglite",
    // What the thread allocates is the statements' parameters and rows, short-lived: a young generation of V8's
    // default size (up to 48 MB) held 30-40 MiB more of RSS than 2-8 MB in a churn of 2,000 result sets.
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<number, (payload: string) => void>();
  let nextId = 0;
  let closed = false;
  let ended: Error | null = null;

  const ready = new Promise<void>((resolve, reject) => {
    worker.on("message", (reply: Reply) => {
      if ("ready" in reply) {
        if (reply.ready) resolve();
        else reject(errorFrom(reply.error));
      } else if ("subscription" in reply) listeners.get(reply.subscription)?.(reply.payload);
      else {
        const waiter = pending.get(reply.id);
        pending.delete(reply.id);
        if (pending.size === 0) worker.unref();
        if (reply.ok) waiter?.resolve(reply.value);
        else waiter?.reject(errorFrom(reply.error));
      }
    });
    const fail = (error: Error) => {
      ended ??= error;
      closed = true;
      reject(error);
      for (const waiter of pending.values()) waiter.reject(error);
      pending.clear();
    };
    worker.on("error", (error) => fail(new Error(`the embedded database's thread failed: ${error.message}`, { cause: error })));
    worker.on("exit", (exitCode) => fail(new Error(`the embedded database's thread ended (exit code ${exitCode})`)));
  });

  function send<T>(request: Sent): Promise<T> {
    if (ended) return Promise.reject(ended);
    const id = ++nextId;
    if (pending.size === 0) worker.ref();
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ ...request, id });
    });
  }

  await ready;
  worker.unref();

  return {
    get closed() {
      return closed;
    },
    query: (async (sql: string, params: readonly unknown[]) => {
      return { ...(await send<QueryAnswer>({ op: "query", sql, params })), fields: [] };
    }) as PGliteQuery,
    async listen(channel, callback) {
      const subscription = await send<number>({ op: "listen", channel });
      listeners.set(subscription, callback);
      return async () => {
        listeners.delete(subscription);
        if (!closed) await send({ op: "unlisten", subscription });
      };
    },
    async dumpDataDir() {
      return new Blob([await send<Uint8Array<ArrayBuffer>>({ op: "dump" })]);
    },
    async close() {
      if (closed) return;
      await send({ op: "close" });
      closed = true;
      ended = new Error("the embedded database is closed");
      await worker.terminate();
    },
  };
}
