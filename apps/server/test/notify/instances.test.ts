/**
 * The "device connection" alert with several instances: the instance that saw
 * the link end may be gone before the grace period is over; the alert is
 * raised anyway (by the periodic duty, from the database), once, and the
 * device's hello on another instance resolves it. PostgreSQL only.
 */
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server.ts";
import { waitUntil } from "../support/gateway.ts";
import { adminClient, type OnboardedDevice, onboardFleet } from "../support/onboarding.ts";
import { testDatabaseKind } from "../support/test-database.ts";
import { createNotifyWorld, type NotifyWorld } from "./support.ts";

const onPostgres = testDatabaseKind() === "postgres";
if (!onPostgres) console.warn("notify/instances.test.ts: several instances need PostgreSQL; skipped on PGlite");

describe.runIf(onPostgres)("device connection alerts across instances", () => {
  let w: NotifyWorld;
  let b: RunningServer;
  let fleet: Simulator;
  let devices: OnboardedDevice[];

  beforeAll(async () => {
    w = await createNotifyWorld();
    await w.api.call("PUT", "/api/notificationsConf", {
      body: { rules: { "device-connection": { warningThreshold: 1, severity: "critical" } } },
    });
    b = await w.g.startAnother();
    // Onboarded through instance B, connected to B.
    ({ fleet, devices } = await onboardFleet(await adminClient(b.url), b.url, 1, { statusIntervalMs: 3_600_000 }));
    await w.g.waitForJobs(devices[0]!.jobIds, "complete");
  });

  afterAll(async () => {
    await fleet?.stop();
    await w?.close();
  });

  it("is raised once after the grace period although the instance that saw the disconnection stopped", async () => {
    const deviceId = devices[0]!.id;
    expect(b.gateway.isConnectedHere(deviceId)).toBe(true);
    await fleet.device(0).disconnect();
    await b.close();
    const [n] = await waitUntil(
      () => w.notifications({ eventType: "device-connection", deviceId }),
      (l) => l.length === 1,
      10_000,
      "the alert raised by instance A",
    );
    expect(n).toMatchObject({ severity: "critical", count: 1, resolved: false });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await w.notifications({ eventType: "device-connection", deviceId }))[0]?.count).toBe(1);
    const runs = await w.g.database.db
      .selectFrom("gateway_duties")
      .select(["runs", "last_instance"])
      .where("name", "=", "device-connection-alerts")
      .executeTakeFirstOrThrow();
    expect(runs.last_instance).toBe(w.g.server.gateway.instanceId);
  });
});
