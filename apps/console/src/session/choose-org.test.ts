import type { ConsoleSession } from "@tern/client";
import { describe, expect, it } from "vitest";
import { chooseOrg } from "./SessionProvider.tsx";

const org = (id: string) => ({ id, name: `org ${id}`, role: "viewer" as const });
const session = (defaultOrgId: string | null, ...ids: string[]): ConsoleSession => ({
  user: { id: "u", email: "u@example.com" },
  organizations: ids.map(org),
  defaultOrgId,
  csrfToken: "t",
});

describe("chooseOrg", () => {
  it("keeps the organization chosen before while the user is still a member of it", () => {
    expect(chooseOrg(session("a", "a", "b"), "b")?.id).toBe("b");
  });
  it("falls back to the default organization, then to the first, and to none", () => {
    expect(chooseOrg(session("a", "a", "b"), "gone")?.id).toBe("a");
    expect(chooseOrg(session(null, "c", "d"), null)?.id).toBe("c");
    expect(chooseOrg(session(null), "a")).toBeNull();
    expect(chooseOrg(null, "a")).toBeNull();
  });
});
