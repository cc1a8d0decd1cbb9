import type { Lab } from "../../lab/lab.ts";
import { formatPhase } from "../../lab/progress.ts";
import { labStatus } from "../../lab/status.ts";
import { labUp } from "../../lab/up.ts";
import type { CliContext } from "../context.ts";

export async function upCommand(
  ctx: CliContext,
  topology: string,
  o: { control: boolean; backend: string; port?: number; keep: boolean },
): Promise<void> {
  ctx.out(`lab up ${topology}${o.control ? "" : " (network only: --no-control)"}`);
  const r = await labUp(topology, {
    stateRoot: ctx.stateRoot,
    control: o.control,
    impairBackend: o.backend as "auto" | "netem" | "emulated",
    port: o.port,
    databaseUrl: ctx.databaseUrl,
    admin: ctx.admin,
    keepOnFailure: o.keep,
    progress: (e) => ctx.out(formatPhase(e)),
  });
  const lab = r.lab;
  ctx.out(`lab '${lab.name}' ${r.reused ? "converged" : "up"} in ${(r.totalMs / 1000).toFixed(2)}s (state: ${lab.dir})`);
  ctx.out(`impairment: ${r.impairment}`);
  if (r.control.started) {
    for (const line of controlSummary(r.control)) ctx.out(line);
    ctx.out("");
    for (const line of await whereThingsRun(lab)) ctx.out(line);
  } else {
    ctx.out("control plane not started (--no-control); it would run:");
    for (const line of r.control.lines) ctx.out(`  ${line}`);
  }
  ctx.out(`next: npm run lab -- status | exec <node> | impair <link> --loss 5 --delay 30 | down`);
}

/** The API, the admin account and the devices, ready to paste into curl. */
function controlSummary(c: {
  apiUrl: string | null;
  credentials: string | null;
  admin: { email: string; password: string } | null;
  devices: Record<string, string>;
}): string[] {
  return [
    "",
    `management API: ${c.apiUrl}/api   (docs: ${c.apiUrl}/api/docs)`,
    `admin: ${c.admin?.email}  password: ${c.admin?.password}   (also in ${c.credentials}, mode 0600)`,
    "devices (approved, connected, configuration applied):",
    ...Object.entries(c.devices).map(([edge, id]) => `  ${edge.padEnd(14)} ${id}`),
    "log in:",
    `  curl -s -X POST ${c.apiUrl}/api/users/login -H 'content-type: application/json' \\`,
    `    -d '{"username":"${c.admin?.email}","password":"${c.admin?.password}"}'`,
  ];
}

/** Namespaces of the routers and the lab's processes with their pids and logs. */
async function whereThingsRun(lab: Lab): Promise<string[]> {
  const st = await labStatus(lab);
  return [
    "namespaces:",
    ...st.nodes.map((n) => `  ${n.name.padEnd(14)} ${n.kind.padEnd(7)} ${n.netns}`),
    "processes:",
    ...st.processes.map(
      (p) => `  ${p.key.padEnd(28)} pid ${String(p.pid).padEnd(8)} ${(p.netns ?? "root namespace").padEnd(26)} log ${p.log}`,
    ),
    "agents keep their own JSON log, state and daemons' files in <lab>/nodes/<edge>/agent/ (logs/agent.log, run/)",
  ];
}
