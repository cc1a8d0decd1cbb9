/**
 * A tunnel: its ends and their state, the thresholds of its notifications,
 * and loss/RTT/jitter of both ends over time (uPlot); delete for members who may.
 */
import { Anchor, Button, Card, Group, NumberInput, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok, type Tunnel } from "@tern/client";
import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { queryKey } from "../../api/keys.ts";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { TunnelCharts } from "../../components/TunnelCharts.tsx";
import { tone } from "../../components/tones.ts";
import { useAction } from "../../components/useAction.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { fixed } from "../tunnels/figures.ts";
import { FIGURES_MS } from "../tunnels/queries.ts";

export default function TunnelPage() {
  const { id = "" } = useParams();
  const org = useOrg();
  const tunnel = useQuery({
    queryKey: queryKey("tunnel", org.id, "one", id),
    queryFn: () => ok(tern.api.GET("/api/tunnels/{id}", { params: { path: { id } } })),
    refetchInterval: FIGURES_MS,
  });
  return (
    <Stack>
      <Anchor component={Link} to="/tunnels" size="sm">
        ← Tunnels
      </Anchor>
      <QueryState query={tunnel} label="the tunnel">
        {(t) => <TunnelView tunnel={t} />}
      </QueryState>
    </Stack>
  );
}

function TunnelView({ tunnel }: { tunnel: Tunnel }) {
  const org = useOrg();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const canDelete = useCan("tunnels", "del");
  const other = tunnel.deviceB ? tunnel.deviceB.name : `peer ${tunnel.peer?.name ?? ""}`;
  const remove = async () => {
    await ok(tern.api.DELETE("/api/tunnels/{id}", { params: { path: { id: tunnel.id } } }));
    await queryClient.invalidateQueries({ queryKey: ["tunnel", org.id] });
    navigate("/tunnels");
  };
  const ends = [
    {
      label: "A",
      device: tunnel.deviceA,
      iface: tunnel.interfaceA,
      loopback: tunnel.loopbackA,
      state: tunnel.tunnelStatusA,
      q: tunnel.quality?.a,
    },
    {
      label: "B",
      device: tunnel.deviceB,
      iface: tunnel.interfaceB,
      loopback: tunnel.loopbackB,
      state: tunnel.tunnelStatusB,
      q: tunnel.quality?.b,
    },
  ];
  return (
    <Stack>
      <Group justify="space-between">
        <Group>
          <Title order={1} size="h2">
            Tunnel #{tunnel.num}: {tunnel.deviceA.name} ↔ {other}
          </Title>
          <StatusBadge status={tunnel.status} />
        </Group>
        {canDelete && (
          <ConfirmButton
            label="Delete tunnel"
            variant="default"
            question={`Delete tunnel #${tunnel.num}? Both routers remove it.`}
            confirm="Delete"
            onConfirm={remove}
          />
        )}
      </Group>
      {tunnel.description && <Text>{tunnel.description}</Text>}
      {tunnel.isPending && <Text c={tone.warn}>Pending: {tunnel.pendingReason}</Text>}
      <Table.ScrollContainer minWidth={640}>
        <Table aria-label="Ends of the tunnel">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>End</Table.Th>
              <Table.Th>Device</Table.Th>
              <Table.Th>Interface</Table.Th>
              <Table.Th>Loopback</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th ta="right">Loss (%)</Table.Th>
              <Table.Th ta="right">RTT (ms)</Table.Th>
              <Table.Th ta="right">Jitter (ms)</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {ends.map((e) => (
              <Table.Tr key={e.label}>
                <Table.Td>{e.label}</Table.Td>
                <Table.Td>
                  {e.device ? (
                    <Anchor component={Link} to={`/devices/${e.device.id}`}>
                      {e.device.name}
                    </Anchor>
                  ) : (
                    `peer ${tunnel.peer?.name ?? ""} (${tunnel.peer?.remoteIP ?? ""})`
                  )}
                </Table.Td>
                <Table.Td>{e.iface ? `${e.iface.name} ${e.iface.IPv4 ?? ""}` : "–"}</Table.Td>
                <Table.Td>{e.loopback || "–"}</Table.Td>
                <Table.Td>
                  <StatusBadge status={e.state} />
                </Table.Td>
                <Table.Td ta="right">{fixed(e.q?.loss)}</Table.Td>
                <Table.Td ta="right">{fixed(e.q?.rtt)}</Table.Td>
                <Table.Td ta="right">{fixed(e.q?.jitter)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Charts tunnel={tunnel} />
      <Thresholds tunnel={tunnel} />
    </Stack>
  );
}

function Charts({ tunnel }: { tunnel: Tunnel }) {
  return (
    <Card withBorder component="section" aria-labelledby="tunnel-charts">
      <TunnelCharts
        tunnelId={tunnel.id}
        names={[tunnel.deviceA.name, tunnel.deviceB?.name ?? "peer"]}
        refetchInterval={FIGURES_MS * 3}
        heading={
          <Title order={2} size="h4" id="tunnel-charts">
            Loss, RTT and jitter
          </Title>
        }
      />
    </Card>
  );
}

type ThresholdValues = NonNullable<Tunnel["notifications"]>;

/** The tunnel's own notification thresholds (PUT /api/tunnels/notifications for this one tunnel). */
function Thresholds({ tunnel }: { tunnel: Tunnel }) {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canEdit = useCan("tunnels", "put");
  const action = useAction();
  const [values, setValues] = useState<ThresholdValues>(() => ({
    rtt: tunnel.notifications?.rtt ?? { warning: 300, critical: 600 },
    dropRate: tunnel.notifications?.dropRate ?? { warning: 5, critical: 20 },
  }));
  const [saved, setSaved] = useState(false);
  const field = (kind: "rtt" | "dropRate", level: "warning" | "critical", label: string) => (
    <NumberInput
      label={label}
      min={0}
      max={kind === "dropRate" ? 100 : undefined}
      value={values[kind]?.[level] ?? ""}
      readOnly={!canEdit}
      onChange={(v) =>
        setValues((s) => ({ ...s, [kind]: { ...(s[kind] ?? { warning: 0, critical: 0 }), [level]: Number(v) || 0 } }))
      }
    />
  );
  const save = async () => {
    setSaved(false);
    const done = await action.run(() =>
      ok(tern.api.PUT("/api/tunnels/notifications", { body: { ids: [tunnel.id], notifications: values } })),
    );
    await queryClient.invalidateQueries({ queryKey: ["tunnel", org.id] });
    setSaved(done);
  };
  return (
    <Card withBorder component="section" aria-labelledby="tunnel-thresholds">
      <Title order={2} size="h4" id="tunnel-thresholds" mb="sm">
        Notification thresholds
      </Title>
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        {field("rtt", "warning", "RTT warning (ms)")}
        {field("rtt", "critical", "RTT critical (ms)")}
        {field("dropRate", "warning", "Loss warning (%)")}
        {field("dropRate", "critical", "Loss critical (%)")}
      </SimpleGrid>
      {action.error !== null && <ErrorAlert title="Not saved" error={action.error} />}
      {canEdit && (
        <Group justify="flex-end" mt="sm">
          {saved && (
            <Text size="sm" role="status">
              Saved
            </Text>
          )}
          <Button onClick={() => void save()} loading={action.busy}>
            Save thresholds
          </Button>
        </Group>
      )}
    </Card>
  );
}
