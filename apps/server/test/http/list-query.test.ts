/** The list conventions (http/list-query.ts) through real list routes: filters, sort, paging, records-total, errors. */
import type { Membership, Organization } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../support/test-server.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };

const t = useTestServer();
const names = ["Alpha", "beta", "Gamma 50%", "Delta_1", "epsilon"];

beforeAll(async () => {
  for (const [i, name] of names.entries()) {
    const res = await t.api("POST", "/api/organizations", {
      token: t.admin.token,
      body: { name, group: i % 2 ? "odd" : "even", tunnelRange: `10.${i}.0.0/16` },
    });
    expect(res.status).toBe(201);
  }
});

const orgs = (query: Record<string, string | number>) =>
  t.api<Organization[]>("GET", "/api/organizations", { token: t.admin.token, query });
const filter = (...f: unknown[]) => JSON.stringify(f);
const orgNames = async (query: Record<string, string | number>) => (await orgs(query)).body.map((o) => o.name);

describe("list conventions", () => {
  it("pages with offset and limit; records-total counts the whole filtered set", async () => {
    const all = await orgs({ sort: "name" });
    expect(all.headers.get("records-total")).toBe("6");
    const page = await orgs({ sort: "name", offset: 2, limit: 2 });
    expect(page.headers.get("records-total")).toBe("6");
    expect(page.body.map((o) => o.name)).toEqual(all.body.slice(2, 4).map((o) => o.name));
    const beyond = await orgs({ offset: 100 });
    expect(beyond.body).toEqual([]);
    expect(beyond.headers.get("records-total")).toBe("6");
  });

  it("sorts ascending and descending, with the reference's aliases", async () => {
    const asc = await orgNames({
      sort: "tunnelRange",
      order: "asc",
      filter: filter({ key: "name", op: "!=", val: "Default organization" }),
    });
    expect(asc).toEqual(["Alpha", "beta", "Gamma 50%", "Delta_1", "epsilon"]);
    const desc = await orgNames({
      sortField: "tunnelRange",
      sortOrder: "desc",
      filters: filter({ key: "group", op: "==", val: "odd" }),
    });
    expect(desc).toEqual(["Delta_1", "beta"]);
  });

  it("== != contains !contains (case-insensitive, % and _ literal)", async () => {
    expect(await orgNames({ filter: filter({ key: "name", op: "==", val: "beta" }) })).toEqual(["beta"]);
    expect(await orgNames({ filter: filter({ key: "name", op: "==", val: "Beta" }) })).toEqual([]);
    expect((await orgNames({ filter: filter({ key: "group", op: "!=", val: "even" }) })).sort()).toEqual([
      "Default organization",
      "Delta_1",
      "beta",
    ]);
    expect(await orgNames({ filter: filter({ key: "name", op: "contains", val: "GAMMA" }) })).toEqual(["Gamma 50%"]);
    expect(await orgNames({ filter: filter({ key: "name", op: "contains", val: "50%" }) })).toEqual(["Gamma 50%"]);
    expect(await orgNames({ filter: filter({ key: "name", op: "contains", val: "a_" }) })).toEqual(["Delta_1"]);
    const notA = await orgNames({ filter: filter({ key: "name", op: "!contains", val: "a" }) });
    expect(notA.sort()).toEqual(["epsilon"]);
  });

  it("contains answers as a case-insensitive substring test, for text with and without case", async () => {
    // Text without case (digits, punctuation, spaces) runs as LIKE, text with case as ILIKE: same answers.
    const all = (await orgNames({ sort: "name" })).sort();
    for (const val of ["5", "0%", "_1", "1", " ", "ALPHA", "ta", "GaMmA 5", "zz"]) {
      const want = all.filter((n) => n.toLowerCase().includes(val.toLowerCase()));
      const got = (await orgNames({ filter: filter({ key: "name", op: "contains", val }) })).sort();
      expect(got, `contains ${JSON.stringify(val)}`).toEqual(want);
      const not = (await orgNames({ filter: filter({ key: "name", op: "!contains", val }) })).sort();
      expect(not, `!contains ${JSON.stringify(val)}`).toEqual(all.filter((n) => !want.includes(n)));
    }
  });

  it("< > <= >= on text and timestamps; in with a list; several filters are ANDed", async () => {
    // Text compares as text: "10.100…" (the default organization) sorts before "10.2".
    expect((await orgNames({ filter: filter({ key: "tunnelRange", op: "<", val: "10.2" }) })).sort()).toEqual([
      "Alpha",
      "Default organization",
      "beta",
    ]);
    expect((await orgNames({ filter: filter({ key: "tunnelRange", op: ">=", val: "10.3.0.0/16" }) })).sort()).toEqual([
      "Delta_1",
      "epsilon",
    ]);
    const all = await orgs({ sort: "createdAt" });
    const third = all.body[2]!.createdAt;
    expect((await orgs({ filter: filter({ key: "createdAt", op: "<=", val: third }) })).body).toHaveLength(3);
    expect((await orgs({ filter: filter({ key: "createdAt", op: ">", val: third }) })).body).toHaveLength(3);
    expect((await orgNames({ filter: filter({ key: "name", op: "in", val: ["Alpha", "epsilon", "nope"] }) })).sort()).toEqual([
      "Alpha",
      "epsilon",
    ]);
    expect(
      await orgNames({
        filter: filter({ key: "group", op: "==", val: "even" }, { key: "name", op: "contains", val: "l" }),
      }),
    ).toEqual(["Alpha", "epsilon"]);
  });

  it("filters on dotted keys and uuid columns", async () => {
    const viewer = await t.addMember("viewer");
    const res = await t.api<Membership[]>("GET", "/api/members", {
      token: t.admin.token,
      query: { filter: filter({ key: "user.email", op: "==", val: viewer.email }) },
    });
    expect(res.body.map((m) => m.user.id)).toEqual([viewer.id]);
    const byId = await t.api<Membership[]>("GET", "/api/members", {
      token: t.admin.token,
      query: { filter: filter({ key: "user.id", op: "in", val: [viewer.id, t.admin.id] }), sort: "user.email" },
    });
    expect(byId.body.map((m) => m.user.email)).toEqual([t.admin.email, viewer.email].sort());
    const scope = await t.api<Membership[]>("GET", "/api/members", {
      token: t.admin.token,
      query: { filter: filter({ key: "scope", op: "==", val: "account" }) },
    });
    expect(scope.body.map((m) => m.user.email)).toEqual([t.admin.email]);
  });

  it("an unknown key, a bad op or a bad value is a 400 that names it", async () => {
    const cases: [Record<string, string | number>, string, RegExp][] = [
      [{ filter: filter({ key: "secret", op: "==", val: 1 }) }, "filter.0.key", /unknown filter key "secret"; allowed: .*name/],
      [{ filter: filter({ key: "name", op: "like", val: "a" }) }, "filter.0.op", /op must be one of/],
      [{ filter: filter({ key: "name", op: "in", val: "a" }) }, "filter.0.val", /'in' takes an array/],
      [{ filter: "[{not json" }, "filter", /JSON array/],
      [{ filter: filter({ key: "createdAt", op: ">", val: "yesterday" }) }, "filter.0.val", /date-time/],
      [{ filter: filter({ key: "id", op: "==", val: "not-a-uuid" }) }, "filter.0.val", /UUID/],
      [{ filter: filter({ key: "createdAt", op: "contains", val: "2025" }) }, "filter.0.op", /text field/],
      [{ sort: "password" }, "sort", /cannot sort by "password"/],
      // Keys from Object.prototype are not fields of a list (once "toString" != 1 matched every row).
      [{ filter: filter({ key: "toString", op: "!=", val: 1 }) }, "filter.0.key", /unknown filter key "toString"/],
      [{ filter: filter({ key: "constructor", op: "==", val: 1 }) }, "filter.0.key", /unknown filter key "constructor"/],
      [{ filter: filter({ key: "__proto__", op: "!=", val: 1 }) }, "filter.0.key", /unknown filter key "__proto__"/],
      [{ filter: filter({ key: "name", op: "==", val: "a", value: "b" }) }, "filter.0", /value/],
      [{ sort: "hasOwnProperty" }, "sort", /cannot sort by "hasOwnProperty"/],
      [{ order: "up" }, "order", /./],
      [{ limit: 1001 }, "limit", /./],
      [{ offset: -1 }, "offset", /./],
      [{ limit: "ten" }, "limit", /whole number/],
    ];
    for (const [query, path, message] of cases) {
      const res = await t.api<ErrorBody>("GET", "/api/organizations", { token: t.admin.token, query });
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      const detail = res.body.details.find((d) => d.path === path);
      expect(detail, `${JSON.stringify(query)} → ${JSON.stringify(res.body.details)}`).toBeDefined();
      expect(detail!.message).toMatch(message);
    }
  });

  it("limit defaults to 100 and accepts up to 1000", async () => {
    expect((await orgs({ limit: 1000 })).status).toBe(200);
    expect((await orgs({ limit: 0 })).body).toEqual([]);
  });
});
