/**
 * A device's statistics history on its page: received and sent rate of each
 * interface, CPU and memory, and the BGP/VRRP state changes of the range
 * (GET /api/devices/{id}/statistics; the server picks the step and tier).
 */
import { Group, SegmentedControl, SimpleGrid, Stack, Table, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { deviceStatisticsQuery } from "../../api/queries.ts";
import { QueryState } from "../../components/QueryState.tsx";
import { type Series, TimeChart } from "../../components/TimeChart.tsx";
import { useOrg } from "../../session/session-context.ts";

const RANGES = [
  { value: "60", label: "1 h" },
  { value: "1440", label: "24 h" },
  { value: "10080", label: "7 d" },
  { value: "43200", label: "30 d" },
];
const COLORS = ["#1c7ed6", "#e8590c", "#2f9e44", "#ae3ec9", "#f08c00", "#0c8599"];

/** `names`: interface names by the device's interface ids (the answer names interfaces by id). */
export function DeviceHistory({ deviceId, names }: { deviceId: string; names: Record<string, string> }) {
  const org = useOrg();
  const [minutes, setMinutes] = useState("60");
  const stats = useQuery({ ...deviceStatisticsQuery(org.id, deviceId, Number(minutes)), refetchInterval: 60_000 });
  // Memoized: a TimeChart re-creates its plot when its series change identity.
  const charts = useMemo(() => {
    const data = stats.data;
    if (!data) return null;
    const times = [...new Set([...data.interfaces.flatMap((i) => i.points.map((p) => p.at)), ...data.health.map((h) => h.at)])]
      .map((at) => Date.parse(at) / 1000)
      .sort((a, b) => a - b);
    if (times.length === 0) return null;
    const index = new Map(times.map((t, i) => [t, i]));
    const column = <T,>(rows: T[], at: (r: T) => string, value: (r: T) => number): (number | null)[] => {
      const out: (number | null)[] = times.map(() => null);
      for (const r of rows) out[index.get(Date.parse(at(r)) / 1000)!] = value(r);
      return out;
    };
    // Mbit/s, or kbit/s for a quiet router.
    const peak = Math.max(0, ...data.interfaces.flatMap((i) => i.points.map((p) => Math.max(p.rxBps, p.txBps))));
    const [unit, divisor] = peak >= 1e6 ? ["Mbit/s", 1e6] : ["kbit/s", 1e3];
    const scaled = (bps: number) => Math.round((bps / divisor) * 100) / 100;
    const traffic: Series[] = data.interfaces.flatMap((i, k) => {
      const name = names[i.interface] ?? i.interface;
      const color = (n: number) => COLORS[(2 * k + n) % COLORS.length]!;
      return [
        {
          label: `${name} in`,
          color: color(0),
          values: column(
            i.points,
            (p) => p.at,
            (p) => scaled(p.rxBps),
          ),
        },
        {
          label: `${name} out`,
          color: color(1),
          values: column(
            i.points,
            (p) => p.at,
            (p) => scaled(p.txBps),
          ),
        },
      ];
    });
    const health: Series[] = [
      {
        label: "CPU",
        color: COLORS[0]!,
        values: column(
          data.health,
          (h) => h.at,
          (h) => h.cpuPercent,
        ),
      },
      {
        label: "memory",
        color: COLORS[1]!,
        values: column(
          data.health,
          (h) => h.at,
          (h) => h.memoryPercent,
        ),
      },
    ];
    const range: [number, number] = [Date.parse(data.from) / 1000, Date.parse(data.to) / 1000];
    return { times, traffic, health, unit, range };
  }, [stats.data, names]);
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <Text size="sm" c="dimmed">
          {stats.data ? `${stats.data.stepSeconds} s per point (${stats.data.tier} tier)` : " "}
        </Text>
        <SegmentedControl aria-label="History range" value={minutes} onChange={setMinutes} data={RANGES} />
      </Group>
      <QueryState query={stats} label="device statistics">
        {(data) => (
          <Stack>
            {!charts ? (
              <Text size="sm">No statistics in this range yet: the router reports its traffic and health with each status.</Text>
            ) : (
              <SimpleGrid cols={{ base: 1, xl: 2 }}>
                <TimeChart title="Traffic" unit={charts.unit} times={charts.times} series={charts.traffic} range={charts.range} />
                <TimeChart title="CPU and memory" unit="%" times={charts.times} series={charts.health} range={charts.range} />
              </SimpleGrid>
            )}
            {data.stateChanges.length > 0 && (
              <Table aria-label="State changes">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>When</Table.Th>
                    <Table.Th>What</Table.Th>
                    <Table.Th>Change</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {data.stateChanges.slice(-20).map((c) => (
                    <Table.Tr key={`${c.at}-${c.kind}-${c.key}`}>
                      <Table.Td>{new Date(c.at).toLocaleString()}</Table.Td>
                      <Table.Td>
                        {c.kind === "bgp" ? "BGP neighbour" : "VRRP group"} {c.key}
                      </Table.Td>
                      <Table.Td>
                        {c.from ?? "–"} → {c.to}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </Stack>
        )}
      </QueryState>
    </Stack>
  );
}
