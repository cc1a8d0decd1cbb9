/**
 * Crash recovery: the lab process is killed with SIGKILL in the middle of
 * `up`, and `down` (from the state file alone) still removes every
 * namespace, process and file it had made.
 */
import { spawn } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { afterEach, describe, expect, it } from "vitest";
import { labDown } from "../src/lab/down.ts";
import { markerOf } from "../src/lab/lab.ts";
import { type LabState, labDir } from "../src/lab/state.ts";
import { isAlive, startProcess } from "../src/lab/supervisor.ts";
import { labUp } from "../src/lab/up.ts";
import { leftovers, TOPOLOGIES, tempStateRoot } from "./helpers.ts";

const enabled = privilegedTestsEnabled("lab: crash recovery", ["ip", "nft", "iptables", "tc", "ping", "gcc"]);
const CLI = join(import.meta.dirname, "..", "src", "cli", "main.ts");

async function readState(root: string): Promise<LabState | null> {
  const text = await readFile(join(labDir(root, "two-sites"), "state.json"), "utf8").catch(() => null);
  try {
    return text ? (JSON.parse(text) as LabState) : null;
  } catch {
    return null;
  }
}

/** Runs `lab up two-sites` as its own process (node --import tsx: one pid) and SIGKILLs it once `when` holds. */
async function killUpWhen(root: string, when: (s: LabState) => boolean): Promise<LabState> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CLI, "up", join(TOPOLOGIES, "two-sites.yaml"), "--no-control", "--state-dir", root],
    {
      stdio: "ignore",
    },
  );
  const exited = new Promise((r) => child.once("exit", r));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = await readState(root);
    if (s && when(s)) {
      child.kill("SIGKILL");
      await exited;
      return (await readState(root))!;
    }
    if (child.exitCode !== null) throw new Error("lab up finished before the kill point");
    if (Date.now() > deadline) throw new Error("kill point never reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe.runIf(enabled)("lab: crash recovery", { timeout: 120_000 }, () => {
  let cleanup: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await cleanup?.();
    cleanup = null;
  });

  it("down removes everything after kill -9 while namespaces are being created", async () => {
    const root = await tempStateRoot();
    cleanup = async () => {
      await labDown(root.root, "two-sites");
      await root.remove();
    };
    const s = await killUpWhen(root.root, (st) => Object.keys(st.namespaces).length > 0);
    expect(s.status).toBe("building");
    const r = await labDown(root.root, "two-sites");
    expect(r.found).toBe(true);
    expect(await leftovers(s.label, s.id)).toEqual({ namespaces: [], processes: [] });
    expect(await stat(labDir(root.root, "two-sites")).catch(() => null)).toBeNull();
  });

  it("down removes everything after kill -9 while impairment helpers are being started", async () => {
    const root = await tempStateRoot();
    cleanup = async () => {
      await labDown(root.root, "two-sites");
      await root.remove();
    };
    const s = await killUpWhen(root.root, (st) => st.processes.length > 0);
    expect(s.status).toBe("building");
    // The helpers are detached: they outlive the killed lab process until down.
    const before = await leftovers(s.label, s.id);
    expect(before.namespaces).toHaveLength(8);
    expect(before.processes.length).toBeGreaterThan(0);
    const r = await labDown(root.root, "two-sites");
    expect(r.namespaces).toBe(8);
    expect(await leftovers(s.label, s.id)).toEqual({ namespaces: [], processes: [] });
    expect(await stat(labDir(root.root, "two-sites")).catch(() => null)).toBeNull();
  });

  it("down also stops a lab process that was started but never recorded", async () => {
    const root = await tempStateRoot();
    const { lab } = await labUp(join(TOPOLOGIES, "two-sites.yaml"), { stateRoot: root.root, control: false });
    cleanup = async () => {
      await labDown(root.root, "two-sites");
      await root.remove();
    };
    const { label, id } = lab.store.state;
    // As if the lab was killed between starting this process and writing its record.
    const stray = await startProcess(
      { key: "stray", role: "test", argv: ["sleep", "300"], log: join(lab.dir, "stray.log") },
      markerOf(label, id),
    );
    expect(await isAlive(stray)).toBe(true);
    await labDown(root.root, "two-sites");
    expect(await isAlive(stray)).toBe(false);
    expect(await leftovers(label, id)).toEqual({ namespaces: [], processes: [] });
  });

  it("up after a crash converges instead of failing", async () => {
    const root = await tempStateRoot();
    cleanup = async () => {
      await labDown(root.root, "two-sites");
      await root.remove();
    };
    const s = await killUpWhen(root.root, (st) => Object.keys(st.namespaces).length > 0);
    const r = await labUp(join(TOPOLOGIES, "two-sites.yaml"), { stateRoot: root.root, control: false });
    expect(r.reused).toBe(true);
    expect(r.lab.store.state.id).toBe(s.id);
    expect(r.lab.store.state.status).toBe("up");
    expect((await leftovers(s.label, s.id)).namespaces).toHaveLength(8);
  });
});
