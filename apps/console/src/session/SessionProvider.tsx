/**
 * The signed-in user (the console's cookie session) and the organization
 * chosen in the switcher (remembered in localStorage; the API's `org`
 * parameter is set on the client so that every call acts in it).
 */

import { useQueryClient } from "@tanstack/react-query";
import { type ConsoleSession, isMfaChallenge } from "@tern/client";
import { type ReactNode, useCallback, useEffect, useMemo, useState } from "react";
import { consoleSession, tern } from "../api/tern.ts";
import { SessionContext, type SessionState } from "./session-context.ts";

const ORG_KEY = "tern.console.org";

/** The organization to act in: the one chosen before if the user still has it, else their default, else the first. */
export function chooseOrg(session: ConsoleSession | null, wanted: string | null) {
  if (!session) return null;
  return (
    session.organizations.find((o) => o.id === wanted) ??
    session.organizations.find((o) => o.id === session.defaultOrgId) ??
    session.organizations[0] ??
    null
  );
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [session, setSession] = useState<ConsoleSession | null | undefined>(undefined);
  const [orgId, setOrgId] = useState<string | null>(() => localStorage.getItem(ORG_KEY));

  useEffect(() => {
    consoleSession.current().then(setSession, () => setSession(null));
  }, []);

  const org = chooseOrg(session ?? null, orgId);
  // Set synchronously during render so that children's first queries already act in the organization.
  tern.org = org?.id ?? null;

  const setOrg = useCallback(
    (id: string) => {
      localStorage.setItem(ORG_KEY, id);
      setOrgId(id);
      queryClient.removeQueries();
    },
    [queryClient],
  );
  const signIn = useCallback<SessionState["signIn"]>(
    async (body) => {
      const answer = await consoleSession.signIn(body);
      if (isMfaChallenge(answer)) return answer;
      queryClient.clear();
      setSession(answer);
      return null;
    },
    [queryClient],
  );
  const signOut = useCallback(async () => {
    try {
      await consoleSession.signOut();
    } finally {
      queryClient.clear();
      setSession(null);
    }
  }, [queryClient]);

  const value = useMemo(() => ({ session, org, setOrg, signIn, signOut }), [session, org, setOrg, signIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
