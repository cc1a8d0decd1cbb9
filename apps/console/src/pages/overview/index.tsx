/**
 * Fleet overview: devices online/offline/pending, tunnels by status, open
 * notifications by severity, the tunnel mesh as a graph (its own chunk,
 * loaded lazily: d3-force is not part of the initial bundle) and the worst
 * tunnels by loss/RTT/jitter over the last 15 minutes. Live events refresh
 * every figure.
 */
import { Card, Center, Group, Loader, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { useQueries, useQuery } from "@tanstack/react-query";
import { lazy, Suspense } from "react";
import { devicesQuery, notificationsQuery, tunnelStatsQuery, tunnelsQuery } from "../../api/queries.ts";
import { EmptyHint, EnrolHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { tone } from "../../components/tones.ts";
import { useOrg } from "../../session/session-context.ts";
import {
  averageFigures,
  deviceCounts,
  openNotificationCounts,
  SEVERITIES,
  TUNNEL_STATUSES,
  tunnelCounts,
  worstFirst,
} from "./summary.ts";

const MeshGraph = lazy(() => import("./mesh/MeshGraph.tsx"));

/** Tunnels whose figures are read for the ranking (one stats call each). */
const RANKED_TUNNELS = 50;

function Figure({ label, value, color }: { label: string; value: number; color?: string }) {
  return (
    <Stack gap={0} align="flex-start">
      <Text size="xl" fw={700} c={color} data-testid={`figure-${label}`}>
        {value}
      </Text>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
    </Stack>
  );
}

function Panel({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Card withBorder padding="lg" radius="md" component="section" aria-label={title}>
      <Title order={2} size="h4" mb="sm">
        {title}
      </Title>
      {children}
    </Card>
  );
}

export default function OverviewPage() {
  const org = useOrg();
  const devices = useQuery(devicesQuery(org.id));
  const tunnels = useQuery(tunnelsQuery(org.id));
  const notifications = useQuery(notificationsQuery(org.id));

  return (
    <Stack>
      <Title order={1} size="h2">
        Fleet overview
      </Title>
      <SimpleGrid cols={{ base: 1, md: 3 }}>
        <Panel title="Devices">
          <QueryState query={devices} label="devices">
            {(list) => {
              const c = deviceCounts(list);
              return (
                <Group gap="xl">
                  <Figure label="online" value={c.online} color={tone.ok} />
                  <Figure label="offline" value={c.offline} color={c.offline ? tone.bad : undefined} />
                  <Figure label="pending" value={c.pending} color={c.pending ? tone.warn : undefined} />
                </Group>
              );
            }}
          </QueryState>
        </Panel>
        <Panel title="Tunnels">
          <QueryState query={tunnels} label="tunnels">
            {(list) => {
              const c = tunnelCounts(list);
              return (
                <Group gap="lg">
                  {TUNNEL_STATUSES.map((s) => (
                    <Figure key={s} label={s} value={c[s]} />
                  ))}
                </Group>
              );
            }}
          </QueryState>
        </Panel>
        <Panel title="Open notifications">
          <QueryState query={notifications} label="notifications">
            {(list) => {
              const c = openNotificationCounts(list);
              return (
                <Group gap="xl">
                  {SEVERITIES.map((s) => (
                    <Figure key={s} label={s} value={c[s]} color={s === "critical" && c[s] ? tone.bad : undefined} />
                  ))}
                </Group>
              );
            }}
          </QueryState>
        </Panel>
      </SimpleGrid>
      {devices.data?.length === 0 && <EnrolHint />}
      {devices.data && devices.data.length > 0 && (
        <Panel title="Tunnel mesh">
          <QueryState query={tunnels} label="tunnels">
            {(list) => (
              <Suspense
                fallback={
                  <Center p="xl">
                    <Loader aria-label="Loading the mesh graph" />
                  </Center>
                }
              >
                <MeshGraph devices={devices.data} tunnels={list} />
              </Suspense>
            )}
          </QueryState>
        </Panel>
      )}
      <Panel title="Worst tunnels (last 15 minutes)">
        <QueryState query={tunnels} label="tunnels">
          {(list) => <WorstTunnels ids={list.filter((t) => t.status !== "N/A").slice(0, RANKED_TUNNELS)} />}
        </QueryState>
      </Panel>
    </Stack>
  );
}

function WorstTunnels({
  ids,
}: {
  ids: { id: string; num: number; deviceA: { name: string }; deviceB: { name: string } | null; peer: unknown }[];
}) {
  const org = useOrg();
  const stats = useQueries({ queries: ids.map((t) => tunnelStatsQuery(org.id, t.id, 15, 10)) });
  if (ids.length === 0)
    return (
      <EmptyHint title="No tunnels yet">
        Create a tunnel between two approved devices (POST /api/tunnels, or the Tunnels page) to see its loss, RTT and jitter
        here.
      </EmptyHint>
    );
  const rows = worstFirst(
    ids.flatMap((t, i) => {
      const figures = averageFigures(stats[i]?.data?.samples ?? []);
      return figures ? [{ ...t, figures }] : [];
    }),
  ).slice(0, 10);
  if (rows.length === 0)
    return (
      <Text size="sm">No measurements in the last 15 minutes yet: tunnels report loss, RTT and jitter once they are up.</Text>
    );
  return (
    <Table striped highlightOnHover aria-label="Worst tunnels">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Tunnel</Table.Th>
          <Table.Th>Between</Table.Th>
          <Table.Th ta="right">Loss %</Table.Th>
          <Table.Th ta="right">RTT ms</Table.Th>
          <Table.Th ta="right">Jitter ms</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((t) => (
          <Table.Tr key={t.id}>
            <Table.Td>#{t.num}</Table.Td>
            <Table.Td>
              {t.deviceA.name} – {t.deviceB?.name ?? "peer"}
            </Table.Td>
            <Table.Td ta="right">{t.figures.loss.toFixed(1)}</Table.Td>
            <Table.Td ta="right">{t.figures.rtt.toFixed(1)}</Table.Td>
            <Table.Td ta="right">{t.figures.jitter.toFixed(1)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
