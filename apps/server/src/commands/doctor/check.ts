/** One line of `tern-server doctor`: a check's verdict, what it saw and what to do. */
export type Verdict = "ok" | "warn" | "fail";

export interface CheckResult {
  name: string;
  verdict: Verdict;
  detail: string;
  /** What to do about a warn or fail. */
  fix?: string;
}

export const ok = (name: string, detail: string): CheckResult => ({ name, verdict: "ok", detail });
export const warn = (name: string, detail: string, fix: string): CheckResult => ({ name, verdict: "warn", detail, fix });
export const fail = (name: string, detail: string, fix: string): CheckResult => ({ name, verdict: "fail", detail, fix });
