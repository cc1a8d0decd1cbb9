/**
 * Peer connections: IPsec peers outside the fleet (a cloud gateway, a partner's
 * firewall) that tunnels can end on, with their tunnel counts; delete for
 * members who may. Creating one takes IKE/ESP parameters best set through the
 * API (`POST /api/peers`).
 */
import { Anchor, Badge, Group, Stack, Table, Text, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok, type Peer } from "@tern/client";
import { Link } from "react-router";
import { queryKey } from "../../api/keys.ts";
import { readAll } from "../../api/queries.ts";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { tone } from "../../components/tones.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";

export default function PeersPage() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canDelete = useCan("peers", "del");
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
        <Anchor component={Link} to="/tunnels">
          Tunnels
        </Anchor>
      </Group>
      <QueryState query={peers} label="peers">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title="No peers yet">
              A peer is an IPsec endpoint outside the fleet. Create one with <code>POST /api/peers</code> (name, remote IP, IKE
              and ESP parameters, pre-shared key), then create a tunnel from a device to it.
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
                    <Table.Th ta="right">Tunnels</Table.Th>
                    {canDelete && <Table.Th>Actions</Table.Th>}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {list.map((p) => (
                    <Table.Tr key={p.id}>
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
                      <Table.Td ta="right">{p.tunnels}</Table.Td>
                      {canDelete && (
                        <Table.Td>
                          <ConfirmButton
                            size="xs"
                            variant="default"
                            label="Delete"
                            aria-label={`Delete peer ${p.name}`}
                            question={`Delete peer ${p.name}? Its tunnels must be deleted first.`}
                            confirm="Delete"
                            onConfirm={() => remove(p)}
                          />
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
