/**
 * Peer connections: IPsec peers outside the fleet (a cloud gateway, a partner's
 * firewall), each with the tunnels that end on it and their live status;
 * create (the peer and its tunnel from a device), edit and delete for members
 * who may. A viewer sees the list only.
 */
import { Anchor, Badge, Box, Button, Group, Stack, Table, Text, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok, type Peer, type TunnelSummary } from "@tern/client";
import { useState } from "react";
import { Link } from "react-router";
import { queryKey } from "../../api/keys.ts";
import { readAll, tunnelsQuery } from "../../api/queries.ts";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { tone } from "../../components/tones.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { PeerForm } from "./PeerForm.tsx";

/** How often the peers' tunnel statuses are read again while the page is shown. */
const STATUS_POLL_MS = 10_000;

export default function PeersPage() {
  const org = useOrg();
  const queryClient = useQueryClient();
  // Creating makes the peer and its tunnel: both permissions are needed.
  const canPostPeers = useCan("peers", "post");
  const canPostTunnels = useCan("tunnels", "post");
  const canCreate = canPostPeers && canPostTunnels;
  const canEdit = useCan("peers", "put");
  const canDelete = useCan("peers", "del");
  const [editing, setEditing] = useState<{ peer: Peer | null } | null>(null);
  // The tunnels that end on each peer, for their status: refetched on the tunnel live events, and also
  // polled, because a tunnel's status also changes without a tunnel event (Pending ends with its job, N/A
  // follows the device's connection: job and device events). The server now sends a tunnel status event
  // only once the report behind it is stored (it used to send it before, which this poll also covered).
  const tunnels = useQuery({ ...tunnelsQuery(org.id), refetchInterval: STATUS_POLL_MS });
  // Peers are not a live-event kind; a tunnel change can change their tunnel counts, hence the tunnel key.
  const peers = useQuery({
    queryKey: queryKey("tunnel", org.id, "peers"),
    queryFn: () => readAll((offset, limit) => ok(tern.api.GET("/api/peers", { params: { query: { offset, limit } } }))),
  });
  const remove = async (peer: Peer) => {
    await ok(tern.api.DELETE("/api/peers/{id}", { params: { path: { id: peer.id } } }));
    await queryClient.invalidateQueries({ queryKey: ["tunnel", org.id] });
  };
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Peer connections
        </Title>
        <Group>
          <Anchor component={Link} to="/tunnels">
            Tunnels
          </Anchor>
          {canCreate && <Button onClick={() => setEditing({ peer: null })}>New peer connection</Button>}
        </Group>
      </Group>
      <PeerForm peer={editing?.peer ?? null} opened={editing !== null} onClose={() => setEditing(null)} />
      <QueryState query={peers} label="peers">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title="No peers yet">
              A peer is an IPsec endpoint outside the fleet (a cloud VPN gateway, a partner's firewall).{" "}
              {canCreate
                ? "Create one with “New peer connection”: its address, pre-shared key and subnets, and the device that connects to it."
                : "A member who may create peers adds them here or with POST /api/peers."}
            </EmptyHint>
          ) : (
            <Table.ScrollContainer minWidth={720}>
              <Table striped highlightOnHover aria-label="Peers">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Remote IP</Table.Th>
                    <Table.Th>IKE / ESP</Table.Th>
                    <Table.Th>Pre-shared key</Table.Th>
                    <Table.Th>Status</Table.Th>
                    {(canEdit || canDelete) && <Table.Th>Actions</Table.Th>}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {list.map((p) => (
                    <Table.Tr key={p.id} data-testid="peer-row">
                      <Table.Td>{p.name}</Table.Td>
                      <Table.Td>{p.remoteIP}</Table.Td>
                      <Table.Td>
                        <Text size="sm">
                          {[p.ikeCryptoAlg, p.ikeKeySize, p.ikeDhGroup].filter(Boolean).join(" ") || "default"} /{" "}
                          {[p.espCryptoAlg, p.espKeySize, p.espDhGroup].filter(Boolean).join(" ") || "default"}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <Badge variant="outline" color={p.pskSet ? tone.ok : tone.warn}>
                          {p.pskSet ? "set" : "missing"}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        <PeerTunnels peer={p} tunnels={tunnels.data} />
                      </Table.Td>
                      {(canEdit || canDelete) && (
                        <Table.Td>
                          <Group gap="xs" wrap="nowrap">
                            {canEdit && (
                              <Button
                                size="xs"
                                variant="default"
                                aria-label={`Edit peer ${p.name}`}
                                onClick={() => setEditing({ peer: p })}
                              >
                                Edit
                              </Button>
                            )}
                            {canDelete && (
                              <ConfirmButton
                                size="xs"
                                variant="default"
                                label="Delete"
                                aria-label={`Delete peer ${p.name}`}
                                question={`Delete peer ${p.name}? Its tunnels must be deleted first.`}
                                confirm="Delete"
                                onConfirm={() => remove(p)}
                              />
                            )}
                          </Group>
                        </Table.Td>
                      )}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )
        }
      </QueryState>
    </Stack>
  );
}

/** The tunnels ending on the peer: each device end with the tunnel's status, linked to the tunnel. */
function PeerTunnels({ peer, tunnels }: { peer: Peer; tunnels: TunnelSummary[] | undefined }) {
  const mine = (tunnels ?? []).filter((t) => t.peer?.id === peer.id);
  if (mine.length === 0)
    return (
      <Text size="sm" c={tone.muted}>
        {peer.tunnels === 0 ? "no tunnel" : `${peer.tunnels} tunnel(s)`}
      </Text>
    );
  return (
    <Stack gap={4}>
      {mine.map((t) => (
        <Group key={t.id} gap="xs" wrap="nowrap">
          <Box flex="none">
            <StatusBadge status={t.status} />
          </Box>
          <Anchor component={Link} to={`/tunnels/${t.id}`} size="sm">
            from {t.deviceA.name || t.deviceA.hostname}
          </Anchor>
        </Group>
      ))}
    </Stack>
  );
}
