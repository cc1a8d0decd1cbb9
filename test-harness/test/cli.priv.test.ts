/** The documented quick start, through the real command line: up --no-control, status, impair, down. */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { labDown } from "../src/lab/down.ts";
import type { LabStatus } from "../src/lab/status.ts";
import { leftovers, TOPOLOGIES, tempStateRoot } from "./helpers.ts";

const enabled = privilegedTestsEnabled("lab: CLI quick start", ["ip", "nft", "iptables", "tc", "ping", "gcc"]);
const CLI = join(import.meta.dirname, "..", "src", "cli", "main.ts");

describe.runIf(enabled)("lab CLI quick start", { timeout: 120_000 }, () => {
  const rootP = tempStateRoot();
  const lab = async (...args: string[]) =>
    execa(process.execPath, ["--import", "tsx", CLI, "--state-dir", (await rootP).root, ...args], {
      reject: false,
      timeout: 60_000,
    });
  afterAll(async () => {
    const root = await rootP;
    await labDown(root.root, "two-sites");
    await root.remove();
  });

  it("builds, shows, impairs and removes the two-site lab", async () => {
    const up = await lab("up", join(TOPOLOGIES, "two-sites.yaml"), "--no-control");
    expect(up.stderr).toBe("");
    expect(up.exitCode).toBe(0);
    expect(up.stdout).toMatch(/^ {2}namespaces \(8\) +\d+\.\d{3}s {2}\(total \d+\.\d{3}s\)$/m);
    expect(up.stdout).toMatch(/^impairment: (emulated: loss = nftables numgen|netem)/m);
    expect(up.stdout).toContain("control plane not started (--no-control); it would run:");
    expect(up.stdout).toMatch(
      /agent site-a: ip netns exec tn-lab-[0-9a-f]{6}-site-a \S+ \S+\/apps\/agent\/bin\/tern-agent register --server http:\/\/127\.0\.0\.1:\d+ --token <registration token> --mode standalone --state-dir /,
    );
    expect(up.stdout).not.toMatch(/PASSWORD|REGISTRATION_TOKEN/);

    const st = JSON.parse((await lab("status", "--json")).stdout) as LabStatus;
    expect(st.status).toBe("up");
    expect(st.nodes.every((n) => n.present)).toBe(true);
    expect(st.links.map((l) => `${l.id} ${l.impairment}`)).toEqual([
      "inet:site-a delay 10ms ±1ms",
      "inet:site-b delay 10ms ±1ms",
    ]);

    const imp = await lab("impair", "inet:site-b", "--loss", "5", "--delay", "30", "--jitter", "0");
    expect(imp.exitCode).toBe(0);
    expect(imp.stdout).toContain("inet:site-b: loss 5% delay 30ms");
    const bad = await lab("impair", "inet:site-z", "--loss", "5");
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain("[LINK_NOT_FOUND]");
    const tooMuch = await lab("impair", "inet", "--loss", "150");
    expect(tooMuch.stderr).toContain("[IMPAIRMENT_INVALID]");

    const ex = await lab("exec", "site-a", "--", "ip", "-4", "-o", "addr", "show", "dev", "wan0");
    expect(ex.stdout).toContain("100.64.1.2/24");

    const after = JSON.parse((await lab("status", "--json")).stdout) as LabStatus;
    expect(after.links.find((l) => l.id === "inet:site-b")?.impairment).toBe("loss 5% delay 30ms");
    expect(after.links.find((l) => l.id === "inet:site-a")?.impairment).toBe("delay 10ms ±1ms");

    const down = await lab("down");
    expect(down.exitCode).toBe(0);
    expect(down.stdout).toMatch(/lab 'two-sites' removed in \d+\.\d+s \(\d+ processes, 8 namespaces\)/);
    expect(await leftovers("lab", st.id)).toEqual({ namespaces: [], processes: [] });
    expect(await stat(st.dir).catch(() => null)).toBeNull();
  });
});
