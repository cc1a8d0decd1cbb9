/** Who is calling and what they may do in the organization the request resolved to. */
import type { Permissions, Role } from "@tern/protocol";

export type Principal =
  | { kind: "user"; userId: string; email: string; sessionId: string; defaultOrgId: string | null }
  | {
      kind: "token";
      tokenId: string;
      name: string;
      orgId: string;
      role: Role;
      /** The key's own masks (not yet cut down to its creator's current rights). */
      masks: Permissions;
      /** The user at the root of the key's chain of creators. */
      creatorUserId: string;
    };

/** A user signed in with a login session (not an access token). */
export type UserPrincipal = Extract<Principal, { kind: "user" }>;

/** What the audit log records as the author of a change. */
export interface Actor {
  kind: "user" | "token" | "system" | "device";
  /** The e-mail, `token:<name>`, `system` or `device:<id>`. */
  label: string;
  userId: string | null;
  tokenId: string | null;
}

export interface OrgRef {
  id: string;
  accountId: string;
  name: string;
}

export interface Access {
  principal: Principal;
  actor: Actor;
  org: OrgRef;
  /** Effective role in the organization (a key: its own role). */
  role: Role;
  /** Effective masks in the organization (a key: its masks cut to its creator's rights). */
  permissions: Permissions;
  /** The user's role on the whole account, null for org-only members and for keys. */
  accountRole: Role | null;
}

export function actorOf(principal: Principal): Actor {
  return principal.kind === "user"
    ? { kind: "user", label: principal.email, userId: principal.userId, tokenId: null }
    : { kind: "token", label: `token:${principal.name}`, userId: principal.creatorUserId, tokenId: principal.tokenId };
}

export const SYSTEM_ACTOR: Actor = { kind: "system", label: "system", userId: null, tokenId: null };
