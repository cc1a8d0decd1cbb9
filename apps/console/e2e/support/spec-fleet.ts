/**
 * The set-up most spec files share: skipped without Chromium, an API client
 * signed in as the stack's administrator, and simulated routers of the file's
 * own (enrolRouters) started before its tests and stopped after them. Call it
 * once at the top of a spec file; read the fields inside the tests (they are
 * filled by the file's beforeAll). A failed test prints the system behind it
 * (diagnose.ts).
 */
import { test } from "@playwright/test";
import { createTernClient, type TernClient } from "@tern/client";
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { hasChromium, missingChromium } from "./browser.ts";
import { diagnoseFailures } from "./diagnose.ts";
import { enrolRouters } from "./routers.ts";
import { stackInfo } from "./stack-info.ts";

export interface SpecFleet {
  /** The administrator's client, in the stack's organization. */
  api: TernClient;
  fleet: Simulator;
  routers: { id: string; name: string }[];
}

export function specFleet(routers: Parameters<typeof enrolRouters>[1]): SpecFleet {
  test.skip(!hasChromium, missingChromium);
  diagnoseFailures();
  const spec = { routers: [] } as unknown as SpecFleet;
  test.beforeAll(async () => {
    if (!hasChromium) return;
    const s = stackInfo();
    spec.api = createTernClient({ baseUrl: s.apiUrl, org: s.orgId });
    await spec.api.login(s.admin.email, s.admin.password);
    Object.assign(spec, await enrolRouters(spec.api, routers));
  });
  test.afterAll(async () => {
    await spec.fleet?.stop().catch(() => {});
    spec.routers = [];
  });
  return spec;
}
