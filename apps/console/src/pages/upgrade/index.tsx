/**
 * A rollout's report (GET /api/agent-upgrades/{id}): its settings and
 * progress, each device's row (canary, batch, state, the version it came
 * from, why it failed or was skipped), live through the `upgrade` events;
 * pause, resume and cancel (asked first) for members who may act on devices.
 */
import { Alert, Anchor, Badge, Button, Group, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { Schemas } from "@tern/client";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { ConfirmDialog } from "../../components/ConfirmButton.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { tone } from "../../components/tones.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { jobsLink } from "../jobs/filters.ts";
import { actErrorText, type RolloutAct, rolloutActs } from "../upgrades/acts.ts";
import { windowText } from "../upgrades/format.ts";
import { rolloutAct, rolloutQuery } from "../upgrades/queries.ts";
import { RolloutProgress } from "../upgrades/RolloutProgress.tsx";

type Report = Schemas["AgentRolloutReport"];

export default function RolloutPage() {
  const { id = "" } = useParams();
  const org = useOrg();
  const report = useQuery(rolloutQuery(org.id, id));
  return (
    <Stack>
      <Anchor component={Link} to="/upgrades" size="sm">
        ← Agent upgrades
      </Anchor>
      <QueryState query={report} label="the rollout">
        {(r) => <RolloutView report={r} />}
      </QueryState>
    </Stack>
  );
}

function RolloutView({ report }: { report: Report }) {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canAct = useCan("devices", "post");
  const acts = rolloutActs(report.state);
  const [busy, setBusy] = useState<RolloutAct | null>(null);
  const [failure, setFailure] = useState<{ act: RolloutAct; error: unknown } | null>(null);
  const [cancelling, setCancelling] = useState(false);

  const refresh = () => queryClient.invalidateQueries({ queryKey: ["upgrade", org.id] });
  const act = async (which: RolloutAct) => {
    setBusy(which);
    setFailure(null);
    try {
      await rolloutAct(report.id, which);
    } catch (error) {
      setFailure({ act: which, error });
    } finally {
      setBusy(null);
      await refresh();
    }
  };

  return (
    <Stack>
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <Title order={1} size="h2">
            Rollout of {report.version}
          </Title>
          <Group gap="xs">
            <StatusBadge status={report.state} />
            <Text size="sm">
              started {new Date(report.createdAt).toLocaleString()} by {report.createdBy}
            </Text>
            {/* Each started device's upgrade is a job in the rollout's job group (its id). */}
            <Anchor component={Link} to={jobsLink({ group: report.id })} size="sm">
              its jobs
            </Anchor>
          </Group>
        </Stack>
        {canAct && (acts.pause || acts.resume || acts.cancel) && (
          <Group gap="xs">
            {acts.pause && (
              <Button variant="default" loading={busy === "pause"} onClick={() => void act("pause")}>
                Pause
              </Button>
            )}
            {acts.resume && (
              <Button loading={busy === "resume"} onClick={() => void act("resume")}>
                Resume
              </Button>
            )}
            {acts.cancel && (
              <Button variant="default" onClick={() => setCancelling(true)}>
                Cancel rollout
              </Button>
            )}
          </Group>
        )}
      </Group>
      {failure && (
        <Alert color="red" title={`Cannot ${failure.act}`} role="alert" variant="light">
          {actErrorText(failure.act, failure.error)}
        </Alert>
      )}
      {report.pausedReason && (
        <Alert color={tone.warn} title="Paused" variant="outline" role="status">
          {report.pausedReason}
        </Alert>
      )}
      <SimpleGrid cols={{ base: 2, sm: 5 }} maw={900}>
        <Figure label="Devices" value={String(report.devices.length)} />
        <Figure label="Window" value={windowText(report.window)} />
        <Figure label="Canaries" value={`${report.canaryPercent} %`} />
        <Figure label="Batch size" value={String(report.batchSize)} />
        <Figure label="Health timeout" value={`${report.healthTimeoutSec} s`} />
      </SimpleGrid>
      <RolloutProgress counts={report.counts} width={420} />
      <DeviceTable devices={report.devices} />
      <ConfirmDialog
        opened={cancelling}
        onClose={() => setCancelling(false)}
        title="Cancel rollout"
        question={`Cancel the rollout of ${report.version}? Devices not started yet are skipped; those in flight finish their upgrade (or roll back) on their own.`}
        confirm="Cancel rollout"
        onConfirm={async () => {
          try {
            await rolloutAct(report.id, "cancel");
          } catch (error) {
            throw new Error(actErrorText("cancel", error));
          } finally {
            await refresh();
          }
        }}
      />
    </Stack>
  );
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <Stack gap={0}>
      <Text size="xs" fw={500}>
        {label}
      </Text>
      <Text size="sm">{value}</Text>
    </Stack>
  );
}

const time = (at: string | null) => (at ? new Date(at).toLocaleString() : "–");

function DeviceTable({ devices }: { devices: Report["devices"] }) {
  return (
    <Table.ScrollContainer minWidth={1000}>
      <Table striped aria-label="Devices of the rollout">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Device</Table.Th>
            <Table.Th>Canary</Table.Th>
            <Table.Th>Batch</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>From version</Table.Th>
            <Table.Th>Detail</Table.Th>
            <Table.Th>Started</Table.Th>
            <Table.Th>Finished</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {devices.map((d) => (
            <Table.Tr key={d.device} data-testid="rollout-device-row">
              <Table.Td>
                <Anchor component={Link} to={`/devices/${d.device}`} size="sm">
                  {d.name}
                </Anchor>
              </Table.Td>
              <Table.Td>
                {d.canary ? (
                  <Badge variant="light" tt="none">
                    canary
                  </Badge>
                ) : (
                  ""
                )}
              </Table.Td>
              <Table.Td>{d.batch}</Table.Td>
              <Table.Td>
                <StatusBadge status={d.state} />
              </Table.Td>
              <Table.Td>{d.fromVersion || "unknown"}</Table.Td>
              <Table.Td>
                <Text size="sm">{d.detail ?? ""}</Text>
              </Table.Td>
              <Table.Td>{time(d.startedAt)}</Table.Td>
              <Table.Td>{time(d.finishedAt)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
