/**
 * `lab up`: builds a lab from a topology file, phase by phase, recording
 * everything in the state file as it goes. Running it again on a lab that is
 * up (same topology) converges: what exists is kept, what is missing (a
 * crashed earlier run, a killed helper) is made. A fresh lab that fails half
 * way is torn down again unless keepOnFailure.
 */
import { createHash } from "node:crypto";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NetnsScope } from "@tern/netlab";
import { LabError, LabErrorCode } from "../errors.ts";
import { planLab } from "../plan/address-plan.ts";
import { loadTopology } from "../topology/index.ts";
import { describeControl, freeLoopbackPort, planControl, savedCredentials, startControl } from "./control/index.ts";
import { labDown } from "./down.ts";
import { chooseBackend, describeBackend, type ImpairBackendChoice } from "./impair/index.ts";
import { Lab, TOPOLOGY_COPY } from "./lab.ts";
import { nativeTool } from "./native.ts";
import { buildNetwork, eachLimited, verifyNetwork } from "./network.ts";
import { binDir, NS_LABEL, REPO_ROOT } from "./paths.ts";
import { startFrrPeer } from "./peers/frr.ts";
import { startStrongswanPeer } from "./peers/strongswan.ts";
import { checkPrerequisites, requiredCommands } from "./prereqs.ts";
import { type PhaseEvent, PhaseTimer, type ProgressSink } from "./progress.ts";
import { acquireLock, labDir, STATE_VERSION, StateStore } from "./state.ts";

export interface UpOptions {
  stateRoot: string;
  /** Start the server and agents (false = network only, `--no-control`). */
  control: boolean;
  impairBackend?: ImpairBackendChoice;
  progress?: ProgressSink;
  keepOnFailure?: boolean;
  repoRoot?: string;
  /** Server port on 127.0.0.1; a free one when omitted. */
  port?: number;
  databaseUrl?: string;
  /** More of the server's settings (docs/server.md), kept for later starts of the same lab. */
  serverEnv?: Record<string, string>;
  /** The first administrator (used when the server's database is empty); a random one otherwise. */
  admin?: { email: string; password: string };
}

export interface UpResult {
  lab: Lab;
  /** True when the lab was already (partly) up and this run converged it. */
  reused: boolean;
  phases: PhaseEvent[];
  totalMs: number;
  impairment: string;
  control: {
    started: boolean;
    apiUrl: string | null;
    credentials: string | null;
    admin: { email: string; password: string } | null;
    /** edge → device id. */
    devices: Record<string, string>;
    lines: string[];
  };
}

export async function labUp(topologyPath: string, opts: UpOptions): Promise<UpResult> {
  const timer = new PhaseTimer(opts.progress);
  const { topology, text } = await timer.phase(
    "topology",
    () => loadTopology(topologyPath),
    (t) => t.topology.name,
  );
  const plan = planLab(topology).plan!;
  const hash = createHash("sha256").update(JSON.stringify(topology)).digest("hex");
  const dir = labDir(opts.stateRoot, topology.name);
  await mkdir(dir, { recursive: true });
  // Daemons that drop privileges (FRR runs as user frr) must be able to reach their directories.
  await chmod(dir, 0o755);
  const release = await acquireLock(dir);

  let store = await StateStore.load(opts.stateRoot, topology.name);
  const reused = store !== null;
  if (store && store.state.topologyHash !== hash) {
    await release();
    throw new LabError(
      LabErrorCode.LAB_EXISTS_DIFFERENT,
      `lab '${topology.name}' is up with a different topology; run 'lab down ${topology.name}' first`,
    );
  }
  if (!store) {
    const now = new Date().toISOString();
    store = new StateStore(opts.stateRoot, topology.name, {
      version: STATE_VERSION,
      name: topology.name,
      label: NS_LABEL,
      id: new NetnsScope(NS_LABEL).id,
      status: "building",
      topologyFile: topologyPath,
      topologyHash: hash,
      createdAt: now,
      updatedAt: now,
      namespaces: {},
      processes: [],
      impairments: {},
      impairment: null,
      control: null,
    });
    await writeFile(join(dir, TOPOLOGY_COPY), text);
    await store.update(() => {});
  }
  const lab = new Lab(opts.stateRoot, store, plan);
  const nsOf = (node: string) => lab.nsName(node);

  try {
    const result = await build(lab, opts, timer);
    await store.update((s) => {
      s.status = "up";
    });
    await release();
    return { lab, reused, phases: timer.phases, totalMs: timer.totalMs, ...result };
  } catch (err) {
    await store.update((s) => {
      s.status = "failed";
    });
    await release();
    if (!reused && !opts.keepOnFailure) await labDown(opts.stateRoot, topology.name);
    throw err;
  }

  async function build(lab: Lab, o: UpOptions, t: PhaseTimer): Promise<Omit<UpResult, "lab" | "reused" | "phases" | "totalMs">> {
    const s = lab.store;
    await t.phase("prerequisites", async () =>
      checkPrerequisites(requiredCommands(plan, { emulated: s.state.impairment?.backend !== "netem", control: o.control })),
    );

    const scope = new NetnsScope(s.state.label, s.state.id);
    await t.phase(
      "namespaces",
      async () => {
        // Write-ahead: names are recorded before any namespace exists, so `down` finds them after a crash.
        await s.update((st) => {
          for (const n of plan.nodes) st.namespaces[n.name] = scope.nameOf(n.name);
        });
        await eachLimited(plan.nodes, 4, async (n) => {
          await scope.netns(n.name, { reuse: true });
        });
        return plan.nodes.length;
      },
      (n) => String(n),
    );

    await t.phase(
      "links, bridges, addresses, routes",
      // With a control plane, Tern configures the edges: their addresses and routes come from the agents.
      () => buildNetwork(plan, nsOf, { managedEdges: o.control }),
      (r) => `${r.links} veth pairs`,
    );
    // Edges managed by Tern have no addresses until their agents applied the configuration: checked after onboarding then.
    if (!o.control)
      await t.phase(
        "wiring check",
        () => verifyNetwork(plan, nsOf, s.state.impairments),
        (n) => `${n} pings`,
      );

    const decision = s.state.impairment ?? (await chooseBackend(o.impairBackend ?? "auto", nsOf(plan.attachments[0]!.cloud)));
    await s.update((st) => {
      st.impairment = decision;
      if (Object.keys(st.impairments).length === 0)
        st.impairments = Object.fromEntries(plan.attachments.map((a) => [a.id, a.impairment]));
    });
    await t.phase(
      "impairment",
      () => lab.applyImpairments(),
      (n) => `${decision.backend}, ${n} impaired links`,
    );

    if (plan.peers.length > 0) {
      await t.phase(
        "non-managed peers",
        async () => {
          for (const p of plan.peers) {
            const peerDir = join(lab.dir, "nodes", p.node, p.kind);
            if (p.kind === "strongswan") await startStrongswanPeer(p, nsOf(p.node), peerDir, lab.procs);
            else await startFrrPeer(p, nsOf(p.node), peerDir, lab.procs);
          }
          return plan.peers.map((p) => `${p.node}: ${p.kind}`).join(", ");
        },
        (d) => d,
      );
    }

    const port = o.port ?? s.state.control?.port ?? (await freeLoopbackPort());
    const relayBin = o.control ? await nativeTool("ns-relay", binDir(lab.stateRoot)) : "<ns-relay>";
    const saved = await savedCredentials(lab.dir);
    const cp = planControl({
      plan,
      labId: s.state.id,
      labDir: lab.dir,
      repoRoot: o.repoRoot ?? REPO_ROOT,
      nsOf,
      port,
      // A converging run keeps the server's database and admin of the first run.
      databaseUrl: o.databaseUrl ?? saved?.databaseUrl,
      serverEnv: o.serverEnv ?? saved?.serverEnv,
      relayBin,
      admin: saved ? { email: saved.email, password: saved.password } : o.admin,
    });
    const lines = describeControl(cp);
    let control: UpResult["control"] = { started: false, apiUrl: null, credentials: null, admin: null, devices: {}, lines };
    if (o.control) {
      // Recorded first: `down` must find the port and `status` the API even when onboarding fails half way.
      await s.update((st) => {
        st.control = {
          enabled: true,
          port,
          apiUrl: cp.apiUrl,
          adminEmail: cp.admin.email,
          devices: st.control?.devices ?? {},
          notes: [],
        };
      });
      const started = await startControl(cp, plan, lab.procs, lab.dir, t);
      await t.phase(
        "wiring check (addresses and routes from Tern)",
        () => verifyNetwork(plan, nsOf, s.state.impairments),
        (n) => `${n} pings`,
      );
      control = {
        started: true,
        apiUrl: started.apiUrl,
        credentials: started.credentials,
        admin: cp.admin,
        devices: started.devices,
        lines,
      };
    }
    await s.update((st) => {
      st.control = {
        enabled: o.control,
        port,
        apiUrl: control.apiUrl,
        adminEmail: control.admin?.email ?? null,
        devices: control.devices,
        notes: control.started ? [`credentials: ${control.credentials}`] : lines,
      };
    });
    return { impairment: describeBackend(decision), control };
  }
}
