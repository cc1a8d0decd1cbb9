/**
 * Onboarding a fresh fleet without a person: with admin credentials, the
 * simulator approves the devices it registered through the server's bulk
 * approval (`POST /api/devices/approve`), as an operator's script would.
 */

/** Credentials of an administrator of the devices' organization (a user without two-factor sign-in, or a token). */
export type AdminCredentials = { email: string; password: string } | { token: string };

/** The bulk approval takes at most this many ids per call (the server's MAX_SELECTED_DEVICE_IDS). */
const IDS_PER_CALL = 10_000;

export interface ApprovalOutcome {
  approved: string[];
  alreadyApproved: string[];
  refused: { id: string; code: string }[];
}

async function bearer(server: string, admin: AdminCredentials): Promise<string> {
  if ("token" in admin) return admin.token;
  const res = await fetch(new URL("/api/users/login", server), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: admin.email, password: admin.password }),
  });
  const body = (await res.json().catch(() => null)) as { accessToken?: string; mfaRequired?: boolean; code?: string } | null;
  if (!res.ok || !body?.accessToken)
    throw new Error(
      body?.mfaRequired
        ? "the simulator's admin has two-factor sign-in: give an API token instead"
        : `admin login failed: ${res.status} ${body?.code ?? ""}`.trim(),
    );
  return body.accessToken;
}

/** Approves the devices (by id) in calls of up to 10,000; each device's result as the server answered it. */
export async function approveDevices(
  server: string,
  admin: AdminCredentials,
  deviceIds: readonly string[],
): Promise<ApprovalOutcome> {
  const token = await bearer(server, admin);
  const outcome: ApprovalOutcome = { approved: [], alreadyApproved: [], refused: [] };
  for (let start = 0; start < deviceIds.length; start += IDS_PER_CALL) {
    const res = await fetch(new URL("/api/devices/approve", server), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ deviceIds: deviceIds.slice(start, start + IDS_PER_CALL) }),
    });
    const body = (await res.json().catch(() => null)) as {
      results?: { id: string; status: string; code?: string }[];
      code?: string;
    } | null;
    if (!res.ok || !body?.results) throw new Error(`bulk approval failed: ${res.status} ${body?.code ?? ""}`.trim());
    for (const r of body.results) {
      if (r.status === "approved") outcome.approved.push(r.id);
      else if (r.status === "alreadyApproved") outcome.alreadyApproved.push(r.id);
      else outcome.refused.push({ id: r.id, code: r.code ?? "" });
    }
  }
  return outcome;
}
