import type { Notification } from "@tern/client";
import { describe, expect, it } from "vitest";
import { averageFigures, openNotificationCounts, worstFirst } from "./summary.ts";

describe("overview figures", () => {
  it("counts open notifications by severity", () => {
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
