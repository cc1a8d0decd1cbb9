/** Checks the tunnels section before anything on the system changes; throws INVALID_CONFIG with the offending path. */
import type { ConfigTunnel } from "@tern/protocol";
import { invalidConfig } from "../../errors.ts";
import { connName } from "./names.ts";
import { espProposals, parseProposals } from "./proposals.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what must be refused
const CONTROL = /[\u0000-\u001f\u007f]/;

export function validateTunnels(tunnels: ConfigTunnel[]): void {
  const names = new Map<string, number>();
  const loopbacks = new Map<string, number>();
  tunnels.forEach((t, i) => {
    const path = `tunnels.${i}`;
    const name = connName(t);
    const other = names.get(name);
    if (other !== undefined)
      throw invalidConfig(`${path}.num`, `${t.kind} tunnel number ${t.num} is used twice (also tunnels.${other})`);
    names.set(name, i);
    for (const [key, id] of [
      ["localId", t.auth.localId],
      ["remoteId", t.auth.remoteId],
    ] as const) {
      if (id.trim() === "" || CONTROL.test(id))
        throw invalidConfig(`${path}.auth.${key}`, "must be a non-empty identity without control characters");
    }
    if (t.auth.psk.length === 0) throw invalidConfig(`${path}.auth.psk`, "must not be empty");
    if (t.localLoopback === t.remoteLoopback) throw invalidConfig(`${path}.remoteLoopback`, "must differ from localLoopback");
    const lo = loopbacks.get(t.localLoopback);
    if (lo !== undefined)
      throw invalidConfig(`${path}.localLoopback`, `${t.localLoopback} is also the loopback of tunnels.${lo}`);
    loopbacks.set(t.localLoopback, i);
    parseProposals(t.ike.proposal, `${path}.ike.proposal`);
    espProposals(t.esp, t.ike.proposal, path);
  });
}
