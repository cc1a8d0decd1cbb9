import type { ConsoleOrganization, ConsoleSession, ConsoleSignIn, MfaChallenge } from "@tern/client";
import { createContext, useContext } from "react";

export interface SessionState {
  /** undefined while the first GET /api/console/session is under way; null when signed out. */
  session: ConsoleSession | null | undefined;
  org: ConsoleOrganization | null;
  setOrg(id: string): void;
  /** Signs in; answers the second-factor challenge when the account has 2FA (then sign in with it and the code). */
  signIn(body: ConsoleSignIn): Promise<MfaChallenge | null>;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error("useSession outside SessionProvider");
  return state;
}

/** The organization the console acts in (signed-in pages only). */
export function useOrg(): ConsoleOrganization {
  const { org } = useSession();
  if (!org) throw new Error("no organization");
  return org;
}
