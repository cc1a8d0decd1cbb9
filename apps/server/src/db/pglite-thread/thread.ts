/**
 * The embedded database's own thread: PGlite runs here, and the server's
 * thread sends it statements (client.ts). PGlite executes a statement
 * synchronously in WebAssembly; in the server's thread every statement held
 * up the sockets, and at 10,000 devices the server ingested only 511–714 of
 * the fleet's 1,000 statuses a second while it served lists (docs/bench.md).
 *
 * Statements run in the order they come, as on one connection; the pool in
 * front (db/pglite-pool.ts) keeps other callers' statements out of an open
 * transaction. A NOTIFY heard during a statement is posted before the
 * statement's answer, so a listener hears it before its sender goes on, as
 * with PGlite in the same thread.
 */
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, parse, protocol } from "@electric-sql/pglite";
import { preparedQuery } from "../pglite-prepared.ts";
import { errorFields, type QueryAnswer, type Reply, type Request, type ThreadOptions } from "./messages.ts";

if (!parentPort) throw new Error("the embedded database's thread runs as a worker thread (db/pglite-thread/client.ts)");
const port = parentPort;
const options = workerData as ThreadOptions;
const post = (reply: Reply) => port.postMessage(reply);

/** One full garbage collection of this thread's heap (the flag set at run time: workers are not started with it). */
function collectGarbage(): void {
  try {
    v8.setFlagsFromString("--expose-gc");
    (runInNewContext("gc") as () => void)();
  } catch {
    // Not essential: the garbage goes with a later collection.
  }
}

async function open(): Promise<PGlite> {
  const pglite = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: new Blob([options.loadDataDir]) } : {}),
    startParams: [...PGlite.defaultStartParams, ...options.startParams],
  });
  // Opening leaves the unpacked file-system bundle (and, for a database made here from a dump, initdb's own
  // WebAssembly instance) as garbage that a small heap may not collect for a long time. Collect it once, shortly
  // after (right away it is still referenced).
  setTimeout(collectGarbage, 1_000).unref();
  return pglite;
}

async function serve(pglite: PGlite): Promise<void> {
  const run = preparedQuery(pglite, { parse, protocol }, options.preparedStatements);
  const subscriptions = new Map<number, () => Promise<void>>();
  let nextSubscription = 0;

  async function answer(request: Request): Promise<unknown> {
    switch (request.op) {
      case "query": {
        const { rows, command, affectedRows, rowCount } = await run(request.sql, request.params);
        return { rows, command, affectedRows, rowCount } satisfies QueryAnswer;
      }
      case "listen": {
        const subscription = ++nextSubscription;
        subscriptions.set(subscription, await pglite.listen(request.channel, (payload) => post({ subscription, payload })));
        return subscription;
      }
      case "unlisten": {
        const unsubscribe = subscriptions.get(request.subscription);
        subscriptions.delete(request.subscription);
        if (unsubscribe && !pglite.closed) await unsubscribe();
        return null;
      }
      case "dump":
        return new Uint8Array(await (await pglite.dumpDataDir("none")).arrayBuffer());
      case "close":
        subscriptions.clear();
        if (!pglite.closed) await pglite.close();
        return null;
    }
  }

  port.on("message", (request: Request) => {
    answer(request).then(
      (value) => {
        // A dump's bytes move rather than copy.
        const transfer = value instanceof Uint8Array ? [value.buffer as ArrayBuffer] : [];
        port.postMessage({ id: request.id, ok: true, value } satisfies Reply, transfer);
        if (request.op === "close") port.close();
      },
      (error: unknown) => post({ id: request.id, ok: false, error: errorFields(error) }),
    );
  });
}

open().then(
  async (pglite) => {
    await serve(pglite);
    post({ ready: true });
  },
  (error: unknown) => {
    post({ ready: false, error: errorFields(error) });
    port.close();
  },
);
