/** What the stack (stack.ts) tells the tests: where the console and the API are, who may sign in, which device waits. */
export interface StackInfo {
  consoleUrl: string;
  apiUrl: string;
  /** true when the server serves the console itself (else vite preview proxies /api to it). */
  servedByServer: boolean;
  admin: { email: string; password: string };
  viewer: { email: string; password: string };
  orgId: string;
  devices: number;
  /** The devices left pending (trying to connect, not approved). */
  pending: { id: string; name: string }[];
  /** A device with a tunnel (to the second device). */
  tunnelDevice: string;
  /** The server's log (warnings and errors unless TERN_E2E_LOG_LEVEL says otherwise), printed by a failed test. */
  serverLog: string;
}

export function stackInfo(): StackInfo {
  const text = process.env.TERN_E2E_STACK;
  if (!text) throw new Error("TERN_E2E_STACK is not set: the tests run through playwright.config.ts's global setup");
  return JSON.parse(text) as StackInfo;
}
