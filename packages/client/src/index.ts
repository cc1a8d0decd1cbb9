export type { FetchLike } from "./auth-fetch.ts";
export { createTernClient, type LoginOptions, type TernApi, type TernClient, type TernClientOptions } from "./client.ts";
export {
  type Branding,
  type ConsoleOrganization,
  type ConsoleSession,
  type ConsoleSignIn,
  consoleSessionApi,
  isMfaChallenge,
  type MfaChallenge,
} from "./console-session.ts";
export { CSRF_HEADER, cookieFetch } from "./cookie-fetch.ts";
export { bearerOf, type Credentials, sessionFromPair } from "./credentials.ts";
export {
  type DiagnosticBody,
  type DiagnosticEvent,
  type DiagnosticKind,
  diagnosticEvents,
  type FleetDiagnosticBody,
  type FleetDiagnosticEvent,
  fleetDiagnosticEvents,
  runDeviceDiagnostic,
  runFleetDiagnostic,
} from "./diagnostic-events.ts";
export { apiErrorFrom, TernApiError, TernConnectionError, type TernErrorCode } from "./errors.ts";
export { takesOrg } from "./org-scope.ts";
export { REFRESH_MARGIN_MS, Session } from "./session.ts";
export type * from "./types.ts";
export { ok } from "./unwrap.ts";
