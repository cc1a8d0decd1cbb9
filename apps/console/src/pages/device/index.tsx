/**
 * One device: its state and actions, interfaces with their live status (LTE
 * included), its traffic and health history, BGP and VRRP state, tunnels with loss/RTT/jitter charts, and
 * its recent jobs; diagnostics run on the router (Diagnostics.tsx).
 */
import { Anchor, Button, Card, Group, Select, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Device, Job, TunnelSummary } from "@tern/client";
import { ok } from "@tern/client";
import { type ReactNode, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { queryKey } from "../../api/keys.ts";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { TunnelCharts } from "../../components/TunnelCharts.tsx";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { approveDevice, deleteDevice } from "../devices/actions.ts";
import { statusOf } from "../devices/device-rows.ts";
import { DeviceActions } from "./DeviceActions.tsx";
import { DeviceHistory } from "./DeviceHistory.tsx";
import { DeviceTags } from "./DeviceTags.tsx";
import { Diagnostics } from "./Diagnostics.tsx";

/** The device's interface names by id (`devId`), for the history's legends. */
const interfaceNames = (device: Device) => Object.fromEntries(device.interfaces.map((i) => [i.devId, i.name]));

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Card withBorder padding="md" radius="md" component="section" aria-label={title}>
      <Title order={2} size="h4" mb="sm">
        {title}
      </Title>
      {children}
    </Card>
  );
}

export default function DevicePage() {
  const { id = "" } = useParams();
  const org = useOrg();
  const device = useQuery({
    queryKey: queryKey("device", org.id, "one", id),
    queryFn: () => ok(tern.api.GET("/api/devices/{id}", { params: { path: { id } } })),
  });
  return (
    <QueryState query={device} label="the device">
      {(d) => <DeviceView device={d} />}
    </QueryState>
  );
}

function DeviceView({ device }: { device: Device }) {
  const org = useOrg();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const canApprove = useCan("devices", "put");
  const canDelete = useCan("devices", "del");
  const [error, setError] = useState<unknown>(null);
  const status = statusOf(device);

  const approve = async () => {
    setError(null);
    try {
      await approveDevice(device.id);
    } catch (err) {
      setError(err);
    }
    await queryClient.invalidateQueries({ queryKey: ["device", org.id] });
  };

  return (
    <Stack>
      <Group justify="space-between">
        <Stack gap={2}>
          <Anchor component={Link} to="/devices" size="sm">
            ← Devices
          </Anchor>
          <Group gap="sm">
            <Title order={1} size="h2">
              {device.name}
            </Title>
            <StatusBadge status={status} />
          </Group>
          <Text size="sm" c="dimmed">
            {device.hostname} · agent {device.versions?.agent ?? "unknown"} ·{" "}
            {device.appliedHash && device.appliedHash === device.desiredHash ? "configuration applied" : "configuration pending"}
            {device.dataPlane === "stopped" ? " · data plane stopped" : ""}
          </Text>
          <DeviceTags device={device} />
        </Stack>
        <Group>
          <DeviceActions device={device} />
          {canApprove && !device.isApproved && <Button onClick={() => void approve()}>Approve</Button>}
          {canDelete && (
            <ConfirmButton
              variant="default"
              label="Delete"
              question={`Delete ${device.name}? The router is removed from the organization and must enrol again.`}
              confirm="Delete device"
              onConfirm={async () => {
                await deleteDevice(device.id);
                await queryClient.invalidateQueries({ queryKey: ["device", org.id] });
                navigate("/devices");
              }}
            />
          )}
        </Group>
      </Group>
      {error !== null && <ErrorAlert title="The server refused" error={error} />}
      {!device.isApproved && (
        <EmptyHint title="Waiting for approval">
          This router has enrolled and waits for a member who may change devices to approve it; then it receives its configuration
          and comes online.
        </EmptyHint>
      )}
      <Interfaces device={device} />
      <Section title="History">
        <DeviceHistory deviceId={device.id} names={interfaceNames(device)} />
      </Section>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Bgp device={device} />
        <Vrrp device={device} />
      </SimpleGrid>
      <Tunnels device={device} />
      {device.isApproved && <Diagnostics device={device} />}
      <Jobs device={device} />
    </Stack>
  );
}

function Interfaces({ device }: { device: Device }) {
  const org = useOrg();
  const statuses = useQueries({
    queries: device.interfaces.map((i) => ({
      queryKey: queryKey("device", org.id, "interface", device.id, i.id),
      queryFn: () =>
        ok(
          tern.api.GET("/api/devices/{id}/interfaces/{interfaceId}/status", {
            params: { path: { id: device.id, interfaceId: i.id } },
          }),
        ),
      enabled: device.isApproved,
    })),
  });
  return (
    <Section title="Interfaces">
      {device.interfaces.length === 0 ? (
        <Text size="sm">The router has not reported its interfaces yet.</Text>
      ) : (
        <Table.ScrollContainer minWidth={700}>
          <Table striped aria-label="Interfaces">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Address</Table.Th>
                <Table.Th>Public</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>LTE</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {device.interfaces.map((i, n) => {
                const s = statuses[n]?.data?.state;
                const state = s && typeof s === "object" ? s : null;
                const lte = state?.lte;
                return (
                  <Table.Tr key={i.id}>
                    <Table.Td>{i.name}</Table.Td>
                    <Table.Td>{i.deviceType}</Table.Td>
                    <Table.Td>{i.type}</Table.Td>
                    <Table.Td>{i.IPv4 ? `${i.IPv4}/${i.IPv4Mask ?? ""}` : i.dhcp ? "DHCP" : "–"}</Table.Td>
                    <Table.Td>
                      {i.PublicIP || "–"}
                      {i.isPublicAddressRateLimited ? " (rate-limited)" : ""}
                    </Table.Td>
                    <Table.Td>
                      {state ? (
                        <StatusBadge status={state.operState} />
                      ) : (
                        <Text size="sm">{statuses[n]?.isError ? "unavailable" : "unknown"}</Text>
                      )}
                    </Table.Td>
                    <Table.Td>
                      {lte
                        ? `${lte.connected ? "connected" : "not connected"}, SIM ${lte.simStatus}${lte.operator ? `, ${lte.operator}` : ""}`
                        : "–"}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Section>
  );
}

function Bgp({ device }: { device: Device }) {
  const org = useOrg();
  const bgp = useQuery({
    queryKey: queryKey("device", org.id, "bgp", device.id),
    queryFn: () => ok(tern.api.GET("/api/devices/{id}/bgp/status", { params: { path: { id: device.id } } })),
    enabled: device.isApproved,
  });
  return (
    <Section title="BGP">
      {!device.isApproved ? (
        <Text size="sm">Known once the device is approved and reports.</Text>
      ) : (
        <QueryState query={bgp} label="BGP status">
          {(b) =>
            typeof b.state !== "object" ? (
              <Text size="sm">No BGP status reported (BGP not configured, or the router has not reported yet).</Text>
            ) : (
              <Stack gap="xs">
                <Text size="sm">
                  {b.state.running ? "Running" : "Not running"} · router id {b.state.routerId || "–"} · local ASN{" "}
                  {b.state.localASN ?? "–"}
                </Text>
                {b.state.neighbors.length === 0 ? (
                  <Text size="sm">No neighbours.</Text>
                ) : (
                  <Table aria-label="BGP neighbours">
                    <Table.Thead>
                      <Table.Tr>
                        <Table.Th>Neighbour</Table.Th>
                        <Table.Th>ASN</Table.Th>
                        <Table.Th>State</Table.Th>
                        <Table.Th ta="right">Prefixes in/out</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {b.state.neighbors.map((n) => (
                        <Table.Tr key={n.ip}>
                          <Table.Td>{n.ip}</Table.Td>
                          <Table.Td>{n.remoteASN}</Table.Td>
                          <Table.Td>
                            <StatusBadge status={n.state} />
                          </Table.Td>
                          <Table.Td ta="right">
                            {n.prefixesReceived}/{n.prefixesSent}
                          </Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                )}
              </Stack>
            )
          }
        </QueryState>
      )}
    </Section>
  );
}

function Vrrp({ device }: { device: Device }) {
  const org = useOrg();
  const vrrp = useQuery({
    queryKey: queryKey("device", org.id, "vrrp"),
    queryFn: () => ok(tern.api.GET("/api/vrrp/status", { params: { query: { limit: 1000 } } })),
  });
  return (
    <Section title="VRRP">
      <QueryState query={vrrp} label="VRRP state">
        {(groups) => {
          const mine = groups.flatMap((g) =>
            g.devices.filter((d) => d.device === device.id).map((d) => ({ group: g, member: d })),
          );
          if (mine.length === 0) return <Text size="sm">This device is in no VRRP group.</Text>;
          return (
            <Table aria-label="VRRP groups">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Group</Table.Th>
                  <Table.Th>Virtual IP</Table.Th>
                  <Table.Th>Interface</Table.Th>
                  <Table.Th>State</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {mine.map(({ group, member }) => (
                  <Table.Tr key={group.id}>
                    <Table.Td>
                      {group.name} (VRID {group.virtualRouterId})
                    </Table.Td>
                    <Table.Td>{group.virtualIp}</Table.Td>
                    <Table.Td>{member.interface}</Table.Td>
                    <Table.Td>
                      <StatusBadge status={member.state} />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          );
        }}
      </QueryState>
    </Section>
  );
}

function Tunnels({ device }: { device: Device }) {
  const org = useOrg();
  const tunnels = useQuery({
    queryKey: queryKey("tunnel", org.id, "device", device.id),
    queryFn: async () =>
      (await ok(
        tern.api.GET("/api/devices/{id}/tunnels", {
          params: { path: { id: device.id }, query: { response: "summary", limit: 1000 } },
        }),
      )) as TunnelSummary[],
  });
  const [chosen, setChosen] = useState<string | null>(null);
  return (
    <Section title="Tunnels">
      <QueryState query={tunnels} label="tunnels">
        {(list) =>
          list.length === 0 ? (
            <Text size="sm">
              No tunnels. Create one between this device and another approved device (POST /api/tunnels, or the Tunnels page).
            </Text>
          ) : (
            <Stack>
              <Table striped aria-label="Tunnels of the device">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Tunnel</Table.Th>
                    <Table.Th>To</Table.Th>
                    <Table.Th>Status</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {list.map((t) => (
                    <Table.Tr key={t.id}>
                      <Table.Td>#{t.num}</Table.Td>
                      <Table.Td>{t.deviceA.id === device.id ? (t.deviceB?.name ?? "peer") : t.deviceA.name}</Table.Td>
                      <Table.Td>
                        <StatusBadge status={t.status} />
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
              <DeviceTunnelCharts device={device} tunnels={list} chosen={chosen ?? list[0]!.id} onChoose={setChosen} />
            </Stack>
          )
        }
      </QueryState>
    </Section>
  );
}

/** The charts of one of the device's tunnels, chosen in a picker. */
function DeviceTunnelCharts({
  device,
  tunnels,
  chosen,
  onChoose,
}: {
  device: Device;
  tunnels: TunnelSummary[];
  chosen: string;
  onChoose: (id: string) => void;
}) {
  const tunnel = tunnels.find((t) => t.id === chosen) ?? tunnels[0]!;
  const side = tunnel.deviceA.id === device.id ? "a" : "b";
  const other = side === "a" ? (tunnel.deviceB?.name ?? "peer") : tunnel.deviceA.name;
  return (
    <TunnelCharts
      tunnelId={tunnel.id}
      side={side}
      names={[device.name, other]}
      heading={
        <Select
          label="Tunnel"
          value={tunnel.id}
          allowDeselect={false}
          onChange={(v) => v && onChoose(v)}
          data={tunnels.map((t) => ({ value: t.id, label: `#${t.num} ${t.deviceA.name} – ${t.deviceB?.name ?? "peer"}` }))}
        />
      }
    />
  );
}

function Jobs({ device }: { device: Device }) {
  const org = useOrg();
  const jobs = useQuery({
    queryKey: queryKey("job", org.id, "device", device.id),
    queryFn: () =>
      ok(
        tern.api.GET("/api/jobs", {
          params: {
            query: {
              filter: JSON.stringify([{ key: "device.id", op: "==", val: device.id }]),
              limit: 20,
              sort: "createdAt",
              order: "desc",
            },
          },
        }),
      ),
  });
  return (
    <Section title="Recent jobs">
      <QueryState query={jobs} label="jobs">
        {(list: Job[]) =>
          list.length === 0 ? (
            <Text size="sm">No jobs yet: a job is queued whenever the device's configuration changes.</Text>
          ) : (
            <Table striped aria-label="Jobs of the device">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Created</Table.Th>
                  <Table.Th>Type</Table.Th>
                  <Table.Th>State</Table.Th>
                  <Table.Th>Error</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((j) => (
                  <Table.Tr key={j.id}>
                    <Table.Td>{new Date(j.createdAt).toLocaleString()}</Table.Td>
                    <Table.Td>{j.type}</Table.Td>
                    <Table.Td>
                      <StatusBadge status={j.state} />
                    </Table.Td>
                    <Table.Td>{j.error?.message ?? ""}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )
        }
      </QueryState>
    </Section>
  );
}
