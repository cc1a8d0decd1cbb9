/** Which stuck-SA repair a tunnel needs (pure), and its back-off. */
import { describe, expect, it } from "vitest";
import type { TunnelSaState } from "../../src/drivers/ikev2/sas.ts";
import {
  BACKOFF_FIRST_MS,
  BACKOFF_MAX_MS,
  newSaHealState,
  RESPONDER_GRACE_MS,
  repaired,
  STUCK_AFTER_MS,
  saRepair,
} from "../../src/healing/stuck-sa.ts";

const child = (state: string) => ({
  state,
  dhGroup: null,
  rekeyIn: null,
  lifeIn: null,
  installedFor: null,
  localTs: [],
  remoteTs: [],
  bytesIn: 0,
  bytesOut: 0,
});
const ike = (state: string, children: string[]): Pick<TunnelSaState, "ikeSas"> => ({
  ikeSas: [
    {
      state,
      localHost: null,
      remoteHost: null,
      initiator: true,
      dhGroup: null,
      establishedFor: 10,
      rekeyIn: null,
      children: children.map(child),
    },
  ],
});

describe("stuck SA repair", () => {
  const fresh = newSaHealState();

  it("nothing while probes are answered or silent for less than STUCK_AFTER_MS, or never answered", () => {
    expect(saRepair(ike("ESTABLISHED", []), true, STUCK_AFTER_MS - 1, fresh, 0)).toBeNull();
    expect(saRepair(ike("ESTABLISHED", []), true, null, fresh, 0)).toBeNull();
  });

  it("IKE SA without CHILD_SA: the initiator initiates at once, the responder after its grace", () => {
    expect(saRepair(ike("ESTABLISHED", []), true, STUCK_AFTER_MS, fresh, 0)?.kind).toBe("initiate");
    expect(saRepair(ike("ESTABLISHED", []), false, STUCK_AFTER_MS, fresh, 0)).toBeNull();
    expect(saRepair(ike("ESTABLISHED", []), false, STUCK_AFTER_MS + RESPONDER_GRACE_MS, fresh, 0)?.kind).toBe("initiate");
  });

  it("CHILD_SA installed but silent: terminate and initiate", () => {
    expect(saRepair(ike("ESTABLISHED", ["INSTALLED"]), false, 4000, fresh, 0)).toMatchObject({ kind: "restart" });
  });

  it("no established IKE SA: left to charon and the driver's heal()", () => {
    expect(saRepair({ ikeSas: [] }, true, 60_000, fresh, 0)).toBeNull();
    expect(saRepair(ike("CONNECTING", []), true, 60_000, fresh, 0)).toBeNull();
  });

  it("back-off doubles after each repair up to the maximum, and blocks repairs meanwhile", () => {
    let s = repaired(fresh, 0);
    expect(s.backoffMs).toBe(BACKOFF_FIRST_MS);
    expect(saRepair(ike("ESTABLISHED", []), true, 10_000, s, BACKOFF_FIRST_MS - 1)).toBeNull();
    expect(saRepair(ike("ESTABLISHED", []), true, 10_000, s, BACKOFF_FIRST_MS)).not.toBeNull();
    const seen = [s.backoffMs];
    for (let i = 0; i < 12; i++) {
      s = repaired(s, 0);
      seen.push(s.backoffMs);
    }
    expect(seen.slice(0, 4)).toEqual([5000, 10_000, 20_000, 40_000]);
    expect(seen.at(-1)).toBe(BACKOFF_MAX_MS);
  });
});
