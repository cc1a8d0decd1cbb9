/**
 * Devices: every device of the organization in a virtualized table (only the
 * rows on screen are in the DOM, so 10,000 devices scroll smoothly), with
 * search, filters, sort, the pending-notification count and the rate-limited
 * interface flag; approve (one or the selected ones) and delete for members
 * who may.
 */
import {
  Alert,
  Button,
  Group,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Text,
  TextInput,
  Title,
  UnstyledButton,
} from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useVirtualizer } from "@tanstack/react-virtual";
import type { DeviceSummary } from "@tern/client";
import { type ReactNode, useCallback, useDeferredValue, useMemo, useRef, useState } from "react";
import { errorText } from "../../api/errors.ts";
import { devicesQuery } from "../../api/queries.ts";
import { ConfirmDialog } from "../../components/ConfirmButton.tsx";
import { EnrolHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { approveDevice, approveDevices, deleteDevice } from "./actions.ts";
import { DeviceRow, ROW_HEIGHT, type RowActions } from "./DeviceRow.tsx";
import { type DeviceStatus, deviceRows, type SortKey, tagsOf } from "./device-rows.ts";
import classes from "./devices.module.css";

const estimateSize = () => ROW_HEIGHT;

export default function DevicesPage() {
  const org = useOrg();
  const devices = useQuery(devicesQuery(org.id));
  return (
    <Stack>
      <Title order={1} size="h2">
        Devices
      </Title>
      <QueryState query={devices} label="devices">
        {(list) => (list.length === 0 ? <EnrolHint /> : <DeviceTable devices={list} />)}
      </QueryState>
    </Stack>
  );
}

function DeviceTable({ devices }: { devices: DeviceSummary[] }) {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canApprove = useCan("devices", "put");
  const canDelete = useCan("devices", "del");
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState<DeviceStatus | "all">("all");
  const [rateLimitedOnly, setRateLimitedOnly] = useState(false);
  const [tag, setTag] = useState<string | null>(null);
  const tags = useMemo(() => tagsOf(devices), [devices]);
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: "name", desc: false });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const deferredSearch = useDeferredValue(search);

  const rows = useMemo(
    () =>
      deviceRows(devices, { search: deferredSearch, status, rateLimitedOnly, tag: tag ?? "", sort: sort.key, desc: sort.desc }),
    [devices, deferredSearch, status, rateLimitedOnly, tag, sort],
  );
  const pendingSelected = rows.filter((d) => selected.has(d.id) && !d.isApproved).map((d) => d.id);

  const refresh = () => queryClient.invalidateQueries({ queryKey: ["device", org.id] });
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setActionError(null);
    try {
      await action();
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(false);
      await refresh();
    }
  };
  // Stable across renders: the memoized rows re-render only when their own props change.
  const runRef = useRef(run);
  runRef.current = run;
  const toggle = useCallback(
    (id: string) =>
      setSelected((s) => {
        const next = new Set(s);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      }),
    [],
  );
  const approveOne = useCallback((id: string) => void runRef.current(() => approveDevice(id)), []);
  const [deleting, setDeleting] = useState<DeviceSummary | null>(null);
  const sortBy = (key: SortKey) => setSort((s) => ({ key, desc: s.key === key ? !s.desc : false }));
  const header = (key: SortKey, label: string) => (
    <th className={classes.cell} aria-sort={sort.key === key ? (sort.desc ? "descending" : "ascending") : "none"}>
      <UnstyledButton onClick={() => sortBy(key)} className={classes.sort}>
        {label} <span aria-hidden="true">{sort.key === key ? (sort.desc ? "▼" : "▲") : ""}</span>
      </UnstyledButton>
    </th>
  );
  const allPendingIds = rows.filter((d) => !d.isApproved).map((d) => d.id);

  return (
    <Stack gap="sm">
      <Group gap="sm" align="flex-end">
        <TextInput
          label="Search"
          placeholder="Name, hostname or address"
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
          w={260}
        />
        <SegmentedControl
          aria-label="Status"
          value={status}
          onChange={(v) => setStatus(v as DeviceStatus | "all")}
          data={[
            { value: "all", label: "All" },
            { value: "online", label: "Online" },
            { value: "offline", label: "Offline" },
            { value: "pending", label: "Pending" },
          ]}
        />
        <Select label="Tag" placeholder="Any tag" data={tags} value={tag} onChange={setTag} clearable searchable w={180} />
        <Switch
          label="Rate-limited interfaces only"
          checked={rateLimitedOnly}
          onChange={(e) => setRateLimitedOnly(e.currentTarget.checked)}
        />
        {canApprove && (
          <Button
            disabled={pendingSelected.length === 0}
            loading={busy}
            onClick={() =>
              void run(async () => {
                const refused = await approveDevices(pendingSelected);
                if (refused.length > 0)
                  throw new Error(`${refused.length} not approved: ${refused.map((r) => r.error).join("; ")}`);
              })
            }
          >
            Approve selected ({pendingSelected.length})
          </Button>
        )}
        {canApprove && allPendingIds.length > 0 && (
          <Button variant="default" onClick={() => setSelected(new Set(allPendingIds))}>
            Select all pending ({allPendingIds.length})
          </Button>
        )}
      </Group>
      {actionError !== null && (
        <Alert color="red" role="alert" title="The server refused">
          {errorText(actionError)}
        </Alert>
      )}
      <Text size="sm" c="dimmed" aria-live="polite">
        {rows.length} of {devices.length} devices
      </Text>
      <VirtualTable
        rows={rows}
        head={
          <tr className={classes.row}>
            <th className={classes.cell}>
              <span className={classes.hidden}>Select</span>
            </th>
            {header("name", "Name")}
            {header("hostname", "Hostname")}
            {header("status", "Status")}
            {header("pendingNotifications", "Notifications")}
            <th className={classes.cell}>Flags</th>
            <th className={classes.cell}>Actions</th>
          </tr>
        }
        selected={selected}
        canApprove={canApprove}
        canDelete={canDelete}
        onToggle={toggle}
        onApprove={approveOne}
        onDelete={setDeleting}
      />
      <ConfirmDialog
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title="Delete"
        question={`Delete ${deleting?.name ?? ""}? The router is removed from the organization and must enrol again.`}
        confirm="Delete device"
        onConfirm={async () => {
          if (!deleting) return;
          await deleteDevice(deleting.id);
          await refresh();
        }}
      />
    </Stack>
  );
}

/**
 * The scrolling part of the table, apart from the toolbar: a scroll re-renders
 * only this (the virtualizer's state), and rows already on screen not at all.
 */
function VirtualTable({
  rows,
  head,
  selected,
  ...actions
}: RowActions & { rows: DeviceSummary[]; head: ReactNode; selected: Set<string> }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize,
    // Rows beyond the viewport, so a wheel step shows no blank (and the 20 rows of the browser tests are all
    // in the DOM). Not what a fast flick costs: that mounts a viewport of new rows per frame whatever the overscan.
    overscan: 10,
  });
  return (
    <div ref={scrollRef} className={classes.scroll} data-testid="devices-scroll">
      <table aria-label="Devices" aria-rowcount={rows.length + 1} className={classes.table}>
        <thead className={classes.head}>{head}</thead>
        <tbody style={{ height: virtualizer.getTotalSize() }} className={classes.body}>
          {virtualizer.getVirtualItems().map((item) => {
            const d = rows[item.index]!;
            return (
              <DeviceRow key={d.id} device={d} index={item.index} start={item.start} checked={selected.has(d.id)} {...actions} />
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
