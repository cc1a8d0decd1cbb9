/** Packet captures inside a namespace: what really crossed an interface while something ran. */
import { execa } from "execa";
import type { ScenarioLab } from "./scenario-lab.ts";

export interface Capture {
  packets: number;
  lines: string[];
}

/** Captures packets matching `filter` on `node`'s `ifname` while `during` runs. */
export async function capture(
  s: ScenarioLab,
  node: string,
  ifname: string,
  filter: string,
  during: () => Promise<void>,
): Promise<Capture> {
  const child = execa("ip", ["netns", "exec", s.ns(node), "tcpdump", "-i", ifname, "-n", "-l", "-q", filter], {
    reject: false,
    buffer: true,
    timeout: 120_000,
  });
  // tcpdump says "listening on …" once its filter is installed: only then does the capture count.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tcpdump in ${node} did not start`)), 10_000);
    child.stderr?.on("data", (d: Buffer) => {
      if (String(d).includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    });
    void child.then((r) => {
      clearTimeout(timer);
      reject(new Error(`tcpdump in ${node} exited: ${r.stderr}`));
    });
  });
  try {
    await during();
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    child.kill("SIGINT");
  }
  const r = await child;
  const lines = String(r.stdout ?? "")
    .split("\n")
    .filter((l) => l.trim() !== "");
  return { packets: lines.length, lines };
}
