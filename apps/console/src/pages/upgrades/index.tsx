/**
 * Agent upgrades (docs/upgrades.md): the rollouts of the organization with
 * their progress (live: the server sends an `upgrade` event on every device's
 * progress), a "New rollout" form for members who may act on devices, and
 * what there is to roll out: the fleet's versions, the account's packages and
 * signing keys (uploaded with packaging/agent-package.mjs).
 */
import { Anchor, Button, Group, Stack, Table, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate } from "react-router";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { windowText } from "./format.ts";
import { FleetVersions, Packages } from "./Inventory.tsx";
import { NewRollout } from "./NewRollout.tsx";
import type { Rollout } from "./progress.ts";
import { rolloutsQuery } from "./queries.ts";
import { RolloutProgress } from "./RolloutProgress.tsx";

export default function UpgradesPage() {
  const org = useOrg();
  const navigate = useNavigate();
  const canCreate = useCan("devices", "post");
  const [creating, setCreating] = useState(false);
  const rollouts = useQuery(rolloutsQuery(org.id));
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Agent upgrades
        </Title>
        {canCreate && !creating && <Button onClick={() => setCreating(true)}>New rollout</Button>}
      </Group>
      {creating && (
        <NewRollout
          onDone={(id) => {
            setCreating(false);
            if (id) navigate(`/upgrades/${id}`);
          }}
        />
      )}
      <Stack gap="xs" component="section" aria-labelledby="rollouts">
        <Title order={2} size="h4" id="rollouts">
          Rollouts
        </Title>
        <QueryState query={rollouts} label="the rollouts">
          {(list) =>
            list.length === 0 ? (
              <EmptyHint title="No rollouts yet">
                Upload a signed package (below), then start a rollout: canaries first, then batches, each device rolling itself
                back if the new version is not healthy.
              </EmptyHint>
            ) : (
              <RolloutTable rollouts={list} />
            )
          }
        </QueryState>
      </Stack>
      <FleetVersions />
      <Packages />
    </Stack>
  );
}

function RolloutTable({ rollouts }: { rollouts: Rollout[] }) {
  return (
    <Table.ScrollContainer minWidth={900}>
      <Table striped aria-label="Rollouts">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Version</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>Progress</Table.Th>
            <Table.Th>Window</Table.Th>
            <Table.Th>Started</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rollouts.map((r) => (
            <Table.Tr key={r.id} data-testid="rollout-row" data-rollout-id={r.id}>
              <Table.Td>
                <Anchor component={Link} to={`/upgrades/${r.id}`} size="sm">
                  {r.version}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={r.state} />
                {r.pausedReason && (
                  <Text size="xs" mt={4}>
                    {r.pausedReason}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <RolloutProgress counts={r.counts} />
              </Table.Td>
              <Table.Td>{windowText(r.window)}</Table.Td>
              <Table.Td>
                {new Date(r.createdAt).toLocaleString()} by {r.createdBy}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
