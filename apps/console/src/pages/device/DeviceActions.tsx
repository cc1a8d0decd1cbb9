/**
 * The device page's actions menu (sync, restart agent, stop/start the data
 * plane) and reset behind a confirmation; each starts a job, listed under Jobs.
 * Shown to members who may change devices; reset only to those who may delete.
 */
import { Anchor, Button, Group, Menu } from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import type { Device } from "@tern/client";
import { useState } from "react";
import { Link } from "react-router";
import { ConfirmDialog } from "../../components/ConfirmButton.tsx";
import { ErrorAlert } from "../../components/QueryState.tsx";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { jobsLink } from "../jobs/filters.ts";
import { type DeviceAction, runDeviceAction } from "./device-writes.ts";

const LABELS: Record<Exclude<DeviceAction, "reset">, string> = {
  sync: "Send configuration again",
  "restart-agent": "Restart agent",
  stop: "Stop data plane",
  start: "Start data plane",
};

export function DeviceActions({ device }: { device: Device }) {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canAct = useCan("devices", "put");
  const canReset = useCan("devices", "del");
  const [resetting, setResetting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  /** The action started and its job (the link to it under Jobs). */
  const [started, setStarted] = useState<{ action: DeviceAction; job: string } | null>(null);
  if (!canAct || !device.isApproved) return null;

  const run = async (action: DeviceAction) => {
    setError(null);
    setStarted(null);
    try {
      setStarted({ action, job: await runDeviceAction(device.id, action) });
    } catch (err) {
      setError(err);
    }
    await queryClient.invalidateQueries({ queryKey: ["device", org.id] });
    await queryClient.invalidateQueries({ queryKey: ["job", org.id] });
  };
  const stopped = device.dataPlane === "stopped";
  const items = (["sync", "restart-agent", stopped ? "start" : "stop"] as const).map((action) => (
    <Menu.Item key={action} onClick={() => void run(action)}>
      {LABELS[action]}
    </Menu.Item>
  ));

  return (
    <Group gap="xs">
      <Menu position="bottom-end" withinPortal>
        <Menu.Target>
          <Button variant="default">Actions</Button>
        </Menu.Target>
        <Menu.Dropdown aria-label="Device actions">
          {items}
          {canReset && (
            <>
              <Menu.Divider />
              <Menu.Item color="red" onClick={() => setResetting(true)}>
                Reset router…
              </Menu.Item>
            </>
          )}
        </Menu.Dropdown>
      </Menu>
      <ConfirmDialog
        opened={resetting}
        onClose={() => setResetting(false)}
        title="Reset router"
        question={`Reset ${device.name}? The agent tears down everything it configured on the router, and the device waits for approval again (its configuration here is kept).`}
        confirm="Reset router"
        onConfirm={async () => {
          setStarted({ action: "reset", job: await runDeviceAction(device.id, "reset") });
          await queryClient.invalidateQueries({ queryKey: ["device", org.id] });
        }}
      />
      {started && (
        <span role="status" style={{ fontSize: "var(--mantine-font-size-sm)" }}>
          {started.action} started:{" "}
          {started.job ? (
            <Anchor component={Link} to={jobsLink({ ids: started.job })} size="sm" underline="always">
              see its job
            </Anchor>
          ) : (
            <Anchor component={Link} to="/jobs" size="sm" underline="always">
              see Jobs
            </Anchor>
          )}
        </span>
      )}
      {error !== null && <ErrorAlert title="The server refused" error={error} />}
    </Group>
  );
}
