/** The kernel probe behind the choice of impairment mechanism. */
import { NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import { afterAll, describe, expect, it } from "vitest";
import { LabErrorCode } from "../src/errors.ts";
import { chooseBackend, netemAvailable } from "../src/lab/impair/probe.ts";

const enabled = privilegedTestsEnabled("lab: impairment probe", ["ip", "tc"]);

describe.runIf(enabled)("impairment mechanism probe", () => {
  const scope = new NetnsScope("labprobe");
  afterAll(() => scope.cleanup());

  it("uses netem where the kernel has it and the emulated mechanism elsewhere, saying why", async () => {
    const ns = await scope.netns("probe");
    const probe = await netemAvailable(ns.name);
    const auto = await chooseBackend("auto", ns.name);
    expect(auto.backend).toBe(probe.ok ? "netem" : "emulated");
    expect(auto.reason).toContain(probe.ok ? "netem works" : "no netem in this kernel");
    // The probe leaves no qdisc behind.
    expect((await ns.exec(["tc", "qdisc", "show", "dev", "lo"])).stdout).not.toContain("netem");
    expect(await chooseBackend("emulated", ns.name)).toEqual({
      backend: "emulated",
      reason: "chosen with --impair-backend emulated",
    });
    if (probe.ok) expect((await chooseBackend("netem", ns.name)).backend).toBe("netem");
    else await expect(chooseBackend("netem", ns.name)).rejects.toMatchObject({ code: LabErrorCode.PREREQUISITE_MISSING });
  });
});
