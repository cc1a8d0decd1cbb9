/**
 * The inbox: the organization's notifications, newest first, filtered on the
 * server; new ones appear live (the notification live event refetches it).
 * Mark read, acknowledge (read and resolved), and the same or delete for every
 * notification the filter matches.
 */
import { Anchor, Badge, Button, Group, Select, Stack, Table, Text, TextInput } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type Notification, ok } from "@tern/client";
import { useDeferredValue, useState } from "react";
import { Link } from "react-router";
import { filterParam } from "../../api/filter.ts";
import { queryKey } from "../../api/keys.ts";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { tone } from "../../components/tones.ts";
import { useAction } from "../../components/useAction.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { DEFAULT_INBOX, type InboxFilter, inboxFilters, inboxSummary } from "./filters.ts";

const SHOWN = 500;
type Update = { status?: "read" | "unread"; resolved?: true };

export function Inbox() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canUpdate = useCan("notifications", "put");
  const canDelete = useCan("notifications", "del");
  const action = useAction();
  const [filter, setFilter] = useState<InboxFilter>(DEFAULT_INBOX);
  const deferred = useDeferredValue(filter);
  const filters = filterParam(inboxFilters(deferred));
  const inbox = useQuery({
    queryKey: queryKey("notification", org.id, "inbox", filters),
    queryFn: () =>
      ok(
        tern.api.GET("/api/notifications", {
          params: { query: { filter: filters, sort: "lastSeenAt", order: "desc", limit: SHOWN } },
        }),
      ),
    placeholderData: (previous) => previous,
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["notification", org.id] });
  const update = (body: Update, ids?: string[]) =>
    action.run(async () => {
      await ok(
        tern.api.PUT("/api/notifications", {
          params: { query: ids ? {} : { filter: filters ?? "[]" } },
          body: ids ? { ids, ...body } : body,
        }),
      );
      await refresh();
    });
  const removeMatching = async () => {
    await ok(tern.api.DELETE("/api/notifications", { params: { query: { filter: filters ?? "[]" } } }));
    await refresh();
  };
  const set = (part: Partial<InboxFilter>) => setFilter((f) => ({ ...f, ...part }));

  return (
    <Stack>
      <Group align="flex-end">
        <Select
          label="Resolution"
          w={130}
          allowDeselect={false}
          value={filter.resolved}
          onChange={(v) => set({ resolved: (v ?? "all") as InboxFilter["resolved"] })}
          data={[
            { value: "open", label: "Open" },
            { value: "resolved", label: "Resolved" },
            { value: "all", label: "All" },
          ]}
        />
        <Select
          label="Read"
          w={120}
          allowDeselect={false}
          value={filter.status}
          onChange={(v) => set({ status: (v ?? "all") as InboxFilter["status"] })}
          data={[
            { value: "all", label: "All" },
            { value: "unread", label: "Unread" },
            { value: "read", label: "Read" },
          ]}
        />
        <Select
          label="Severity"
          w={130}
          allowDeselect={false}
          value={filter.severity}
          onChange={(v) => set({ severity: (v ?? "all") as InboxFilter["severity"] })}
          data={["all", "critical", "warning", "info"]}
        />
        <TextInput
          label="Title"
          placeholder="Part of the title"
          value={filter.search}
          onChange={(e) => set({ search: e.currentTarget.value })}
        />
      </Group>
      {(canUpdate || canDelete) && (
        <Group gap="xs">
          <Text size="sm">Every matching notification:</Text>
          {canUpdate && (
            <>
              <Button size="xs" variant="default" loading={action.busy} onClick={() => void update({ status: "read" })}>
                Mark all read
              </Button>
              <Button
                size="xs"
                variant="default"
                loading={action.busy}
                onClick={() => void update({ status: "read", resolved: true })}
              >
                Resolve all
              </Button>
            </>
          )}
          {canDelete && (
            <ConfirmButton
              size="xs"
              variant="default"
              label="Delete matching"
              question="Delete every notification this filter matches (not only those shown)?"
              confirm="Delete"
              onConfirm={removeMatching}
            />
          )}
        </Group>
      )}
      {action.error !== null && <ErrorAlert title="Not changed" error={action.error} />}
      <QueryState query={inbox} label="notifications">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title={filters ? "Nothing matches" : "No notifications"}>
              {filters
                ? "No notification matches this filter: all clear, or change the filter to see resolved ones."
                : "Devices raise notifications when a tunnel goes down, loss or RTT pass their thresholds, a job fails… Set who hears of them under Configuration."}
            </EmptyHint>
          ) : (
            <NotificationTable list={list} canUpdate={canUpdate} busy={action.busy} update={update} />
          )
        }
      </QueryState>
    </Stack>
  );
}

function NotificationTable({
  list,
  canUpdate,
  busy,
  update,
}: {
  list: Notification[];
  canUpdate: boolean;
  busy: boolean;
  update: (body: Update, ids: string[]) => Promise<boolean>;
}) {
  return (
    <>
      <Text size="sm" aria-live="polite">
        {inboxSummary(list)}
        {list.length === SHOWN ? ` (the newest ${SHOWN})` : ""}
      </Text>
      <Table.ScrollContainer minWidth={900}>
        <Table aria-label="Notifications">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Severity</Table.Th>
              <Table.Th>Notification</Table.Th>
              <Table.Th>Last seen</Table.Th>
              <Table.Th ta="right">Count</Table.Th>
              <Table.Th>State</Table.Th>
              {canUpdate && <Table.Th>Actions</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((n) => (
              <Table.Tr
                key={n.id}
                data-testid="notification-row"
                data-notification-id={n.id}
                fw={n.status === "unread" ? 600 : undefined}
              >
                <Table.Td>
                  <StatusBadge status={n.severity} />
                </Table.Td>
                <Table.Td>
                  <Text size="sm" fw="inherit">
                    {n.title}
                  </Text>
                  {/* Links inside the sentence are underlined: told apart from the text without colour (axe link-in-text-block). */}
                  <Text size="xs">
                    {n.details}
                    {n.targets.tunnelId && (
                      <>
                        {" "}
                        <Anchor component={Link} to={`/tunnels/${n.targets.tunnelId}`} size="xs" underline="always">
                          tunnel
                        </Anchor>
                      </>
                    )}
                    {n.deviceId && (
                      <>
                        {" "}
                        <Anchor component={Link} to={`/devices/${n.deviceId}`} size="xs" underline="always">
                          device
                        </Anchor>
                      </>
                    )}
                  </Text>
                </Table.Td>
                <Table.Td>{new Date(n.lastSeenAt).toLocaleString()}</Table.Td>
                <Table.Td ta="right">{n.count}</Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    <Badge variant="outline" color={n.status === "unread" ? tone.info : tone.muted}>
                      {n.status}
                    </Badge>
                    {n.resolved && (
                      <Badge variant="outline" color={tone.ok}>
                        resolved
                      </Badge>
                    )}
                  </Group>
                </Table.Td>
                {canUpdate && (
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      {n.status === "unread" && (
                        <Button
                          size="xs"
                          variant="default"
                          disabled={busy}
                          onClick={() => void update({ status: "read" }, [n.id])}
                        >
                          Mark read
                        </Button>
                      )}
                      {!n.resolved && (
                        <Button
                          size="xs"
                          variant="default"
                          disabled={busy}
                          aria-label={`Acknowledge: ${n.title}`}
                          onClick={() => void update({ status: "read", resolved: true }, [n.id])}
                        >
                          Acknowledge
                        </Button>
                      )}
                    </Group>
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </>
  );
}
