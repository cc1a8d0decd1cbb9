/**
 * Which impairment mechanism this kernel allows. netem is the natural tool;
 * kernels built without sch_netem (like the development machines here) get
 * the emulated mechanism: nftables numgen for loss, an NFQUEUE helper for
 * delay and jitter, tbf for rate.
 */
import { run } from "@tern/netlab";
import { LabError, LabErrorCode } from "../../errors.ts";

export type ImpairBackend = "netem" | "emulated";
export type ImpairBackendChoice = ImpairBackend | "auto";

export interface BackendDecision {
  backend: ImpairBackend;
  reason: string;
}

/** Tries a netem qdisc on the loopback of a lab namespace (`ns`), then removes it. */
export async function netemAvailable(ns: string): Promise<{ ok: boolean; why: string }> {
  const add = await run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"], {
    allowFailure: true,
  });
  if (add.exitCode !== 0) return { ok: false, why: add.stderr.trim().split("\n")[0] || `tc exit ${add.exitCode}` };
  await run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "lo", "root"], { allowFailure: true });
  return { ok: true, why: "tc qdisc netem works in this kernel" };
}

export async function chooseBackend(choice: ImpairBackendChoice, ns: string): Promise<BackendDecision> {
  if (choice === "emulated") return { backend: "emulated", reason: "chosen with --impair-backend emulated" };
  const probe = await netemAvailable(ns);
  if (probe.ok) return { backend: "netem", reason: probe.why };
  if (choice === "netem") {
    throw new LabError(LabErrorCode.PREREQUISITE_MISSING, `--impair-backend netem, but this kernel has no netem: ${probe.why}`);
  }
  return { backend: "emulated", reason: `no netem in this kernel (${probe.why})` };
}

/** One line for status output. */
export function describeBackend(d: BackendDecision): string {
  return d.backend === "netem"
    ? `netem (tc qdisc netem: loss, delay, jitter, rate) - ${d.reason}`
    : `emulated: loss = nftables numgen, delay/jitter = NFQUEUE + nfq-netem, rate = tbf - ${d.reason}`;
}
