/**
 * Loss, RTT and jitter of one tunnel over a chosen time range: the stats
 * query, the range control, the empty state and three TimeCharts (both ends
 * of the tunnel in each). The device page and the tunnel page both show it;
 * `side` says whose values come first (the device whose page this is).
 */
import { Group, SegmentedControl, SimpleGrid, Stack, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useMemo, useState } from "react";
import { tunnelStatsQuery } from "../api/queries.ts";
import { type Sample, toColumns } from "../pages/device/stats.ts";
import { useOrg } from "../session/session-context.ts";
import { QueryState } from "./QueryState.tsx";
import { type Series, TimeChart } from "./TimeChart.tsx";

const RANGES = [
  { value: "15", label: "15 min" },
  { value: "60", label: "1 h" },
  { value: "360", label: "6 h" },
  { value: "1440", label: "24 h" },
];

/** The colours of the first and the second end in every chart. */
const COLORS = ["#1c7ed6", "#e8590c"] as const;

export function TunnelCharts({
  tunnelId,
  side = "a",
  names,
  heading,
  refetchInterval,
}: {
  tunnelId: string;
  /** The side whose values come first. */
  side?: "a" | "b";
  /** Names of the first and the second end, in the charts' legends. */
  names: [string, string];
  /** Shown left of the range control (a title, a tunnel picker). */
  heading?: ReactNode;
  refetchInterval?: number;
}) {
  const org = useOrg();
  const [minutes, setMinutes] = useState("60");
  const stats = useQuery({ ...tunnelStatsQuery(org.id, tunnelId, Number(minutes)), refetchInterval });
  const [first, second] = names;
  // Memoized: a TimeChart re-creates its plot when its series change identity.
  const charts = useMemo(() => {
    if (!stats.data) return null;
    const cols = toColumns(stats.data.samples as Sample[], side);
    if (cols.times.length === 0) return null;
    const pair = (values: [(number | null)[], (number | null)[]]): Series[] => [
      { label: first, color: COLORS[0], values: values[0] },
      { label: second, color: COLORS[1], values: values[1] },
    ];
    return { times: cols.times, loss: pair(cols.loss), rtt: pair(cols.rtt), jitter: pair(cols.jitter) };
  }, [stats.data, side, first, second]);
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        {heading ?? <span />}
        <SegmentedControl aria-label="Time range" value={minutes} onChange={setMinutes} data={RANGES} />
      </Group>
      <QueryState query={stats} label="tunnel statistics">
        {() =>
          !charts ? (
            <Text size="sm">
              No measurements in this range yet: the routers report loss, RTT and jitter while the tunnel is up.
            </Text>
          ) : (
            <SimpleGrid cols={{ base: 1, xl: 3 }}>
              <TimeChart title="Loss" unit="%" times={charts.times} series={charts.loss} />
              <TimeChart title="RTT" unit="ms" times={charts.times} series={charts.rtt} />
              <TimeChart title="Jitter" unit="ms" times={charts.times} series={charts.jitter} />
            </SimpleGrid>
          )
        }
      </QueryState>
    </Stack>
  );
}
