/** The 202 answer of changes that queue device jobs (used by the network API). */
import { OpenAPIHono } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { acceptedWithJobs, jobsQueuedResponse } from "../../src/http/accepted.ts";
import type { AppEnv } from "../../src/http/env.ts";

describe("acceptedWithJobs", () => {
  it("answers 202 with the job ids and a Location listing them", async () => {
    const app = new OpenAPIHono<AppEnv>();
    app.post("/x", (c) => acceptedWithJobs(c, ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"]));
    const res = await app.request("/x", { method: "POST" });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      jobIds: ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"],
    });
    expect(res.headers.get("location")).toBe(
      "/api/jobs?ids=11111111-1111-4111-8111-111111111111,22222222-2222-4222-8222-222222222222",
    );
    expect(jobsQueuedResponse.headers.Location).toBeDefined();
  });
});
