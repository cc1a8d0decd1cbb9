import { spawn } from "node:child_process";
import { Lab } from "../../lab/lab.ts";
import type { CliContext } from "../context.ts";
import { resolveLabName } from "../resolve.ts";

/** Runs a command (default: a shell) inside a node's namespace, with the terminal attached. */
export async function execCommand(ctx: CliContext, labArg: string | undefined, node: string, argv: string[]): Promise<number> {
  const lab = await Lab.open(ctx.stateRoot, await resolveLabName(ctx.stateRoot, labArg));
  const cmd = argv.length > 0 ? argv : [ctx.shell];
  const child = spawn("ip", ["netns", "exec", lab.nsName(node), ...cmd], { stdio: "inherit" });
  return new Promise((resolve) => child.on("exit", (code, sig) => resolve(code ?? (sig ? 128 : 1))));
}
