/**
 * A time-series chart (uPlot: canvas, fast with thousands of points). Colours
 * follow the theme; the chart is re-created when the data or scheme changes
 * and resized with its container. The canvas has a text alternative: the
 * title and the latest values. The two sides of a tunnel report at their own
 * instants, so each series has gaps where the other has points: lines span them.
 */
import { Stack, Text, useComputedColorScheme } from "@mantine/core";
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface Series {
  label: string;
  color: string;
  values: (number | null)[];
}

export function TimeChart({
  title,
  unit,
  times,
  series,
  height = 200,
  range,
}: {
  title: string;
  unit: string;
  times: number[];
  series: Series[];
  height?: number;
  /** The x axis' span in Unix seconds (default: the data's); a range with few points still reads as that range. */
  range?: [number, number];
}) {
  const ref = useRef<HTMLDivElement>(null);
  const scheme = useComputedColorScheme("light");

  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const axisColor = scheme === "dark" ? "#c9c9c9" : "#343a40";
    const gridColor = scheme === "dark" ? "#373a40" : "#e9ecef";
    const axis = { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor } };
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 200),
        height,
        series: [{}, ...series.map((s) => ({ label: `${s.label} (${unit})`, stroke: s.color, width: 2, spanGaps: true }))],
        axes: [axis, { ...axis, label: unit }],
        ...(range ? { scales: { x: { time: true, range: () => range } } } : {}),
        legend: { show: true },
      },
      [times, ...series.map((s) => s.values)] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 200), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, unit, height, scheme, range]);

  const latest = series.map((s) => `${s.label} ${s.values.findLast((v) => v !== null)?.toFixed(1) ?? "–"} ${unit}`).join(", ");
  return (
    <Stack gap={4}>
      <Text size="sm" fw={600}>
        {title} ({unit})
      </Text>
      <div ref={ref} role="img" aria-label={`${title}: latest ${latest}`} className="time-chart" />
    </Stack>
  );
}
