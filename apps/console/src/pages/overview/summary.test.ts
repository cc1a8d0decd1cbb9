import type { DeviceSummary, Notification, TunnelSummary } from "@tern/client";
import { describe, expect, it } from "vitest";
import { averageFigures, deviceCounts, openNotificationCounts, tunnelCounts, worstFirst } from "./summary.ts";

const device = (isApproved: boolean, isConnected: boolean) => ({ isApproved, isConnected }) as DeviceSummary;

describe("overview figures", () => {
  it("counts devices online, offline and pending (an unapproved device is pending, connected or not)", () => {
    expect(
      deviceCounts([device(true, true), device(true, false), device(false, true), device(false, false), device(true, true)]),
    ).toEqual({
      online: 2,
      offline: 1,
      pending: 2,
      total: 5,
    });
  });
  it("counts tunnels by status and open notifications by severity", () => {
    const tunnels = ["Connected", "Connected", "Pending", "N/A"].map((status) => ({ status }) as TunnelSummary);
    expect(tunnelCounts(tunnels)).toEqual({ Connected: 2, "Not Connected": 0, Pending: 1, "N/A": 1 });
    const n = (severity: string, resolved: boolean) => ({ severity, resolved }) as Notification;
    expect(openNotificationCounts([n("critical", false), n("critical", true), n("info", false)])).toEqual({
      critical: 1,
      warning: 0,
      info: 1,
    });
  });
  it("ranks tunnels by loss, then RTT, then jitter", () => {
    expect(averageFigures([])).toBeNull();
    expect(
      averageFigures([
        { loss: 10, rtt: 20, jitter: 1 },
        { loss: 0, rtt: 40, jitter: 3 },
      ]),
    ).toEqual({ loss: 5, rtt: 30, jitter: 2 });
    const rows = [
      { id: "a", figures: { loss: 0, rtt: 90, jitter: 1 } },
      { id: "b", figures: { loss: 2, rtt: 10, jitter: 1 } },
      { id: "c", figures: { loss: 0, rtt: 90, jitter: 5 } },
    ];
    expect(worstFirst(rows).map((r) => r.id)).toEqual(["b", "c", "a"]);
  });
});
