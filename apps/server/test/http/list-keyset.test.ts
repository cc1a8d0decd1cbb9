/** Keyset paging through the routes: `records-next` → `?after=`, and its errors (VALIDATION_FAILED naming `after`). */
import type { DeviceSummary, Job } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertTestJob } from "../support/device-fixtures.ts";
import { insertTestDevice } from "../support/devices.ts";
import { useTestServer } from "../support/test-server.ts";

type ErrorBody = { code: string; details: { path: string }[] };
const t = useTestServer();

beforeAll(async () => {
  for (let i = 0; i < 23; i++) {
    const d = await insertTestDevice(t, { name: `keyset-${i % 6}` });
    await insertTestJob(t, d.id, { createdAt: new Date(Date.parse("2026-02-01T00:00:00Z") + Math.floor(i / 3) * 1000) });
  }
});

async function walk<T extends { id: string }>(path: string, query: Record<string, string | number>) {
  const ids: string[] = [];
  let after: string | undefined;
  const totals = new Set<string | null>();
  for (let n = 0; n < 50; n++) {
    const res = await t.api<T[]>("GET", path, {
      token: t.admin.token,
      query: { ...query, limit: 5, ...(after ? { after } : {}) },
    });
    expect(res.status).toBe(200);
    totals.add(res.headers.get("records-total"));
    ids.push(...res.body.map((x) => x.id));
    const next = res.headers.get("records-next");
    if (!next) break;
    after = next;
  }
  return { ids, totals: [...totals] };
}

describe("keyset paging on the routes", () => {
  it("devices and jobs: following records-next gives every item once, in the offset order", async () => {
    for (const [path, query] of [
      ["/api/devices", { response: "summary", sort: "name" }],
      ["/api/devices", { response: "summary", sort: "name", order: "desc" }],
      ["/api/jobs", {}],
    ] as const) {
      const whole = await t.api<(DeviceSummary | Job)[]>("GET", path, { token: t.admin.token, query: { ...query, limit: 1000 } });
      expect(whole.headers.get("records-next")).toBeNull();
      const walked = await walk(path, query);
      expect(walked.ids).toEqual(whole.body.map((x) => x.id));
      expect(walked.totals).toEqual([whole.headers.get("records-total")]);
    }
  });

  it("a bad cursor, a cursor of another sort, or after with offset: 400 naming after", async () => {
    const first = await t.api("GET", "/api/devices", { token: t.admin.token, query: { sort: "name", limit: 5 } });
    const next = first.headers.get("records-next");
    expect(next).toBeTruthy();
    for (const query of [
      { after: "garbage" },
      { after: next!, sort: "hostname" },
      { after: next!, sort: "name", order: "desc" },
      { after: next!, sort: "name", offset: 5 },
    ]) {
      const res = await t.api<ErrorBody>("GET", "/api/devices", { token: t.admin.token, query });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((d) => d.path)).toContain("after");
    }
  });

  it("other organizations' rows never come through a cursor", async () => {
    const tenant = await t.createTenant("keyset-other");
    const first = await t.api("GET", "/api/devices", { token: t.admin.token, query: { sort: "name", limit: 5 } });
    const res = await t.api<DeviceSummary[]>("GET", "/api/devices", {
      token: tenant.token,
      query: { sort: "name", limit: 5, after: first.headers.get("records-next")! },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers.get("records-total")).toBe("0");
  });
});
