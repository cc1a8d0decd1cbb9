/**
 * Remote actions the server asks of the agent (`device-action` requests,
 * protocol device-actions.ts). Each answers once it is done, except the parts
 * that would cut the answer's way back: `restart-agent` exits after the
 * answer went out, and `reset` removes addresses, routes and firewall after
 * it (the data plane is already down and the config forgotten when it
 * answers).
 */
import type { AgentAction, DeviceActionResult } from "@tern/protocol";
import type { Logger } from "../drivers/driver.ts";
import { AgentError } from "../errors.ts";
import type { ReconcileOutcome, Reconciler } from "../reconcile/index.ts";

/** Time for the answer to leave before the agent exits or tears its links down. */
export const AFTER_ANSWER_MS = 300;

export interface DeviceActionDeps {
  reconciler: Reconciler;
  log: Logger;
  /** Ends the process so its supervisor starts it again; absent: `restart-agent` is refused. */
  restart?: (() => void) | undefined;
  /** Something changed worth a status at once. */
  notify(reason: string): void;
}

function failed(action: string, outcome: ReconcileOutcome): AgentError {
  return new AgentError("DRIVER_FAILED", `${action} failed: ${outcome.error ?? "unknown error"}`);
}

export class DeviceActions {
  constructor(private readonly deps: DeviceActionDeps) {}

  async run(action: AgentAction): Promise<DeviceActionResult> {
    const { reconciler, log } = this.deps;
    log.info("device action", { action });
    const answer = (message: string): DeviceActionResult => {
      this.deps.notify(`action ${action}`);
      return { action, dataPlane: reconciler.dataPlane, message };
    };
    switch (action) {
      case "restart-agent": {
        const restart = this.deps.restart;
        if (!restart) throw new AgentError("INVALID_REQUEST", "this agent runs without a supervisor that would restart it");
        setTimeout(restart, AFTER_ANSWER_MS).unref();
        return answer("the agent restarts now");
      }
      case "stop": {
        const outcome = await reconciler.stopDataPlane();
        if (!outcome.ok) throw failed("stop", outcome);
        return answer("data plane stopped: tunnels, BGP, DHCP, VRRP and policy routing are down");
      }
      case "start": {
        const outcome = await reconciler.startDataPlane();
        if (outcome && !outcome.ok) throw failed("start", outcome);
        return answer(
          outcome ? `data plane started: config ${outcome.appliedHash} applied again` : "nothing to start: no config",
        );
      }
      case "reset": {
        const outcome = await reconciler.forget();
        if (!outcome.ok) throw failed("reset", outcome);
        setTimeout(() => {
          void reconciler.tearDown("reset").then((o) => {
            if (!o.ok) log.error("reset: tearing down interfaces, routes and firewall failed", { error: o.error });
            else log.info("reset: everything the agent configured is torn down");
          });
        }, AFTER_ANSWER_MS).unref();
        return answer("reset: data plane down and configuration forgotten; interfaces, routes and firewall follow");
      }
    }
  }
}
