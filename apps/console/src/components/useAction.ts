/**
 * A write started from a button: busy while it runs, its error (shown with
 * ErrorAlert, the API's message and code) kept until the next run.
 */
import { useCallback, useState } from "react";

export interface Action {
  busy: boolean;
  error: unknown;
  /** Runs `write`; answers whether it succeeded (its error is in `error` otherwise). */
  run(write: () => Promise<unknown>): Promise<boolean>;
  clear(): void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (write: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await write();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => setError(null), []);
  return { busy, error, run, clear };
}
