/**
 * Fault drills on a lab's control plane: stop, kill or start an edge's
 * agent, cut or restore an edge's control link, restart the server.
 */

import { LabError, LabErrorCode } from "../../errors.ts";
import { LabControl } from "../../lab/control/index.ts";
import { Lab } from "../../lab/lab.ts";
import type { CliContext } from "../context.ts";
import { resolveLabName } from "../resolve.ts";

export async function drillCommand(ctx: CliContext, labArg: string | undefined, what: string, args: string[]): Promise<void> {
  const lab = await Lab.open(ctx.stateRoot, await resolveLabName(ctx.stateRoot, labArg));
  const control = await LabControl.open(lab);
  const t0 = performance.now();
  const done = (msg: string) => ctx.out(`${msg} (${((performance.now() - t0) / 1000).toFixed(2)}s)`);
  if (what === "server") {
    if (args[0] !== "restart") throw usage("server restart");
    await control.restartServer();
    return done(`server restarted: ${control.apiUrl}/api`);
  }
  const [edge, action] = args;
  if (!edge || !action) throw usage(what === "agent" ? "agent <edge> start|stop|kill" : "link <edge> down|up");
  control.agent(edge); // NODE_NOT_FOUND for anything but an edge
  if (what === "agent") {
    if (action === "start") return done(`agent of ${edge} running, pid ${await control.startAgent(edge)}`);
    if (action === "stop" || action === "kill") {
      await control.stopAgent(edge, action === "kill" ? "kill" : "term");
      return done(
        `agent of ${edge} ${action === "kill" ? "killed (its daemons keep running)" : "stopped (the router stays configured)"}`,
      );
    }
    throw usage("agent <edge> start|stop|kill");
  }
  if (action === "down") {
    await control.disconnect(edge);
    return done(`control link of ${edge} cut: the device is disconnected, its router keeps its configuration`);
  }
  if (action === "up") {
    await control.reconnect(edge);
    return done(`control link of ${edge} restored: the agent reconnects with its back-off (up to 60 s)`);
  }
  throw usage("link <edge> down|up");
}

const usage = (form: string) => new LabError(LabErrorCode.USAGE, `usage: npm run lab -- ${form}`);
