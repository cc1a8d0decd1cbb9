/**
 * Fleet overview: devices online/offline/pending, tunnels by status, open
 * notifications by severity, the tunnel mesh as a graph (its own chunk,
 * loaded lazily: d3-force is not part of the initial bundle) and the worst
 * tunnels by loss/RTT/jitter over the last 15 minutes. Live events refresh
 * every figure. The figures are counted by the server and only the tunnels
 * the capped graph draws are read (overview-queries.ts), not the whole fleet.
 */
import { Card, Center, Group, Loader, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { useQueries, useQuery } from "@tanstack/react-query";
import type { DeviceSummary } from "@tern/client";
import { lazy, Suspense, useMemo } from "react";
import { devicesQuery, notificationsQuery, tunnelStatsQuery } from "../../api/queries.ts";
import { EmptyHint, EnrolHint } from "../../components/EmptyHint.tsx";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { tone } from "../../components/tones.ts";
import { useOrg } from "../../session/session-context.ts";
import { chooseDevices, type FleetTotals } from "./mesh/mesh.ts";
import {
  deviceCountsQuery,
  rankedTunnelsQuery,
  troubledTunnelsQuery,
  tunnelCountsQuery,
  tunnelsOfDevicesQuery,
} from "./overview-queries.ts";
import { averageFigures, openNotificationCounts, SEVERITIES, TUNNEL_STATUSES, worstFirst } from "./summary.ts";

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
  const devices = useQuery(deviceCountsQuery(org.id));
  const tunnels = useQuery(tunnelCountsQuery(org.id));
  const ranked = useQuery(rankedTunnelsQuery(org.id, RANKED_TUNNELS));
  const notifications = useQuery(notificationsQuery(org.id));

  return (
    <Stack>
      <Title order={1} size="h2">
        Fleet overview
      </Title>
      <SimpleGrid cols={{ base: 1, md: 3 }}>
        <Panel title="Devices">
          <QueryState query={devices} label="devices">
            {(c) => {
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
            {(c) => {
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
      {devices.data?.total === 0 && <EnrolHint />}
      {devices.data && devices.data.total > 0 && (
        <Panel title="Tunnel mesh">
          <Mesh tunnelTotal={tunnels.data ? Object.values(tunnels.data).reduce((a, b) => a + b, 0) : undefined} />
        </Panel>
      )}
      <Panel title="Worst tunnels (last 15 minutes)">
        <QueryState query={ranked} label="tunnels">
          {(list) => <WorstTunnels ids={list} />}
        </QueryState>
      </Panel>
    </Stack>
  );
}

/**
 * The mesh graph's data: the devices (the devices page's list, shared in the
 * cache), the troubled tunnels to choose at most MAX_NODES of them, then the
 * tunnels of the chosen ones only.
 */
function Mesh({ tunnelTotal }: { tunnelTotal: number | undefined }) {
  const org = useOrg();
  const devices = useQuery(devicesQuery(org.id));
  const troubled = useQuery(troubledTunnelsQuery(org.id));
  const chosen = useMemo(
    () => (devices.data && troubled.data ? chooseDevices(devices.data, troubled.data) : null),
    [devices.data, troubled.data],
  );
  const ids = useMemo(() => chosen?.map((d) => d.id) ?? [], [chosen]);
  const tunnels = useQuery({ ...tunnelsOfDevicesQuery(org.id, ids), enabled: chosen !== null });
  const deviceTotal = devices.data?.length;
  const totals = useMemo<FleetTotals | undefined>(
    () => (deviceTotal !== undefined && tunnelTotal !== undefined ? { devices: deviceTotal, tunnels: tunnelTotal } : undefined),
    [deviceTotal, tunnelTotal],
  );
  if (devices.isError)
    return <ErrorAlert title="Cannot load devices" error={devices.error} retry={() => void devices.refetch()} />;
  if (troubled.isError)
    return <ErrorAlert title="Cannot load tunnels" error={troubled.error} retry={() => void troubled.refetch()} />;
  return (
    <QueryState query={tunnels} label="tunnels">
      {(list) => (
        <Suspense
          fallback={
            <Center p="xl">
              <Loader aria-label="Loading the mesh graph" />
            </Center>
          }
        >
          <MeshGraph devices={chosen as DeviceSummary[]} tunnels={list} totals={totals} />
        </Suspense>
      )}
    </QueryState>
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
