/**
 * Tunnels: every tunnel of the organization with its status and the live
 * loss/RTT/jitter of its worse end (live events refetch the list when a
 * tunnel changes), a filter, and the creation of a tunnel for members who may.
 */
import { Anchor, Group, SegmentedControl, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import type { Tunnel } from "@tern/client";
import { useDeferredValue, useMemo, useState } from "react";
import { Link } from "react-router";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { CreateTunnel } from "./CreateTunnel.tsx";
import { filterTunnels, fixed, type TunnelStatus, worstFigures } from "./figures.ts";
import { detailedTunnelsQuery } from "./queries.ts";

export default function TunnelsPage() {
  const org = useOrg();
  const tunnels = useQuery(detailedTunnelsQuery(org.id));
  const canCreate = useCan("tunnels", "post");
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Tunnels
        </Title>
        <Anchor component={Link} to="/peers">
          Peer connections
        </Anchor>
      </Group>
      {canCreate && <CreateTunnel />}
      <QueryState query={tunnels} label="tunnels">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title="No tunnels yet">
              {canCreate
                ? "Choose two approved devices and a WAN interface of each above, then create the tunnel: it appears here as Pending, then Connected once both ends report it up."
                : "A member who may create tunnels can connect two devices here."}
            </EmptyHint>
          ) : (
            <TunnelTable tunnels={list} />
          )
        }
      </QueryState>
    </Stack>
  );
}

function TunnelTable({ tunnels }: { tunnels: Tunnel[] }) {
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState<TunnelStatus | "all">("all");
  const deferred = useDeferredValue(search);
  const rows = useMemo(() => filterTunnels(tunnels, deferred, status), [tunnels, deferred, status]);
  return (
    <Stack gap="sm">
      <Group align="flex-end">
        <TextInput
          label="Search"
          placeholder="Number, device or address"
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
          w={260}
        />
        <SegmentedControl
          aria-label="Status"
          value={status}
          onChange={(v) => setStatus(v as TunnelStatus | "all")}
          data={["all", "Connected", "Not Connected", "Pending", "N/A"].map((v) => ({
            value: v,
            label: v === "all" ? "All" : v,
          }))}
        />
      </Group>
      <Text size="sm" aria-live="polite">
        {rows.length} of {tunnels.length} tunnels
      </Text>
      <Table.ScrollContainer minWidth={760}>
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>#</Table.Th>
              <Table.Th>Between</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th ta="right">Loss (%)</Table.Th>
              <Table.Th ta="right">RTT (ms)</Table.Th>
              <Table.Th ta="right">Jitter (ms)</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((t) => {
              const figures = worstFigures(t.quality);
              return (
                <Table.Tr key={t.id} data-testid="tunnel-row">
                  <Table.Td>
                    <Anchor component={Link} to={`/tunnels/${t.id}`} size="sm">
                      #{t.num}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    {t.deviceA.name} ({t.interfaceA?.name}) ↔{" "}
                    {t.deviceB ? `${t.deviceB.name} (${t.interfaceB?.name})` : `peer ${t.peer?.name}`}
                    {t.description && <Text size="xs">{t.description}</Text>}
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={t.status} />
                    {t.isPending && t.pendingReason && <Text size="xs">{t.pendingReason}</Text>}
                  </Table.Td>
                  <Table.Td ta="right">{fixed(figures?.loss)}</Table.Td>
                  <Table.Td ta="right">{fixed(figures?.rtt)}</Table.Td>
                  <Table.Td ta="right">{fixed(figures?.jitter)}</Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
