/**
 * The round trip of a device's real management websocket, seen on the wire
 * at the management node (labs with `control: { cloud }`): the server's
 * websocket pings (opcode 0x89) toward the device and the agent's pongs
 * (0x8a) back, matched in order. The link is plain ws inside the lab, so the
 * first payload byte of a segment is the frame's opcode byte. The server
 * pings every TERN_WS_PING_INTERVAL_MS: the lab that uses this sets it short.
 */
import { execa } from "execa";
import { MGMT_NODE } from "../../../src/plan/routers.ts";
import type { ScenarioLab } from "./scenario-lab.ts";

/** Ping → pong round trips (ms) of the websocket between `deviceAddress` and the server, while `during` runs. */
export async function controlRtts(s: ScenarioLab, deviceAddress: string, during: () => Promise<void>): Promise<number[]> {
  const att = s.lab.plan.attachments.find((a) => a.node === MGMT_NODE);
  const port = s.lab.store.state.control?.port;
  if (!att || !port) throw new Error("controlRtts needs a lab whose control link crosses a cloud");
  const opcode = "tcp[((tcp[12] & 0xf0) >> 2)]";
  const filter = `host ${deviceAddress} and tcp port ${port} and (${opcode} = 0x89 or ${opcode} = 0x8a)`;
  const child = execa("ip", ["netns", "exec", s.ns(MGMT_NODE), "tcpdump", "-i", att.nodeIf, "-n", "-l", "-tt", filter], {
    reject: false,
    buffer: true,
    timeout: 180_000,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("tcpdump on the management node did not start")), 10_000);
    child.stderr?.on("data", (d: Buffer) => {
      if (String(d).includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  try {
    await during();
  } finally {
    child.kill("SIGINT");
  }
  const out = String((await child).stdout ?? "");
  // "1764100000.123456 IP 100.64.3.2.41234 > 100.64.1.2.50432: Flags [P.], …": the server's side has the port.
  const rtts: number[] = [];
  let pingAt: number | null = null;
  for (const line of out.split("\n")) {
    const m = /^(\d+\.\d+) IP (\S+) > (\S+):/.exec(line);
    if (!m) continue;
    const at = Number(m[1]) * 1000;
    const fromServer = m[2]!.endsWith(`.${port}`);
    if (fromServer) pingAt ??= at;
    else if (pingAt !== null) {
      rtts.push(at - pingAt);
      pingAt = null;
    }
  }
  return rtts;
}
