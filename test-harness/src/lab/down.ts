/**
 * `lab down`: removes everything a lab made, from its state file alone (no
 * topology needed), so it works after any crash: recorded processes (by pid +
 * start time), processes carrying the lab's marker that were never recorded,
 * every namespace recorded or carrying the lab's name prefix (processes still
 * inside die with it), and finally the lab directory.
 */
import { rm, stat } from "node:fs/promises";
import { deleteNetns, NetnsScope } from "@tern/netlab";
import { markerOf } from "./lab.ts";
import { eachLimited } from "./network.ts";
import { type PhaseEvent, PhaseTimer, type ProgressSink } from "./progress.ts";
import { acquireLock, labDir, StateStore } from "./state.ts";
import { findMarked, stopProcess } from "./supervisor.ts";

export interface DownResult {
  found: boolean;
  processes: number;
  namespaces: number;
  phases: PhaseEvent[];
  totalMs: number;
}

export async function labDown(stateRoot: string, name: string, progress?: ProgressSink): Promise<DownResult> {
  const timer = new PhaseTimer(progress);
  const dir = labDir(stateRoot, name);
  if (
    !(await stat(dir).then(
      () => true,
      () => false,
    ))
  )
    return { found: false, processes: 0, namespaces: 0, phases: [], totalMs: 0 };
  const release = await acquireLock(dir);
  let processes = 0;
  let namespaces = 0;
  try {
    const store = await StateStore.load(stateRoot, name).catch(() => null);
    if (store) {
      const { state } = store;
      processes = await timer.phase(
        "processes",
        async () => {
          // Graceful first: daemons remove their own sockets and routes on SIGTERM.
          await Promise.all(state.processes.map((p) => stopProcess(p, 3000)));
          const strays = await findMarked(markerOf(state.label, state.id));
          await Promise.all(strays.map((p) => stopProcess(p, 1000)));
          return state.processes.length + strays.length;
        },
        (n) => String(n),
      );
      namespaces = await timer.phase(
        "namespaces",
        async () => {
          // Every recorded name carries the scope's prefix, so the prefix finds recorded and unrecorded ones alike.
          const present = await new NetnsScope(state.label, state.id).existing();
          await eachLimited(present, 4, deleteNetns);
          return present.length;
        },
        (n) => String(n),
      );
    }
  } finally {
    await release();
  }
  // The state root itself and its build cache (.bin) stay.
  await timer.phase("files", () => rm(dir, { recursive: true, force: true }));
  return { found: true, processes, namespaces, phases: timer.phases, totalMs: timer.totalMs };
}
