/**
 * Jobs: the configuration jobs sent to the devices, newest first, filtered by
 * state, type and device on the server; their state moves live (live events
 * refetch the list), a failed job shows its error; delete one, or every job
 * the filter matches, for members who may. A link may open it on one job
 * group or a few jobs (`?group=` / `?ids=`, what an act on devices started).
 */
import { Anchor, Code, Group, Select, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type Job, ok } from "@tern/client";
import { useDeferredValue, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { filterParam } from "../../api/filter.ts";
import { queryKey } from "../../api/keys.ts";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { JOB_TYPES, type JobFilter, jobDuration, jobFilters, jobScope } from "./filters.ts";

const SHOWN = 500;

export default function JobsPage() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canDelete = useCan("jobs", "del");
  const [filter, setFilter] = useState<JobFilter>({ state: "all", type: "all", device: "" });
  const deferred = useDeferredValue(filter);
  const filters = filterParam(jobFilters(deferred));
  const [params] = useSearchParams();
  const scope = jobScope(params);
  const jobs = useQuery({
    queryKey: queryKey("job", org.id, "list", filters, scope),
    queryFn: () =>
      ok(
        tern.api.GET("/api/jobs", {
          params: { query: { filter: filters, sort: "createdAt", order: "desc", limit: SHOWN, ...scope } },
        }),
      ),
    placeholderData: (previous) => previous,
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["job", org.id] });
  const removeOne = async (job: Job) => {
    await ok(tern.api.DELETE("/api/jobs/{id}", { params: { path: { id: job.id } } }));
    await refresh();
  };
  const removeMatching = async () => {
    await ok(tern.api.DELETE("/api/jobs", { params: { query: filters ? { filter: filters } : { all: "true" } } }));
    await refresh();
  };
  const set = (part: Partial<JobFilter>) => setFilter((f) => ({ ...f, ...part }));

  return (
    <Stack>
      <Title order={1} size="h2">
        Jobs
      </Title>
      <Group align="flex-end">
        <Select
          label="State"
          w={150}
          allowDeselect={false}
          value={filter.state}
          onChange={(v) => set({ state: (v ?? "all") as JobFilter["state"] })}
          data={["all", "queued", "running", "complete", "failed"]}
        />
        <Select
          label="Type"
          w={170}
          allowDeselect={false}
          value={filter.type}
          onChange={(v) => set({ type: (v ?? "all") as JobFilter["type"] })}
          data={["all", ...JOB_TYPES]}
        />
        <TextInput
          label="Device"
          placeholder="Part of the name"
          value={filter.device}
          onChange={(e) => set({ device: e.currentTarget.value })}
        />
        {/* Bulk delete goes by the filter only: not offered while the page shows one group's jobs. */}
        {canDelete && !scope && (
          <ConfirmButton
            variant="default"
            label={filters ? "Delete matching jobs" : "Delete all jobs"}
            question={
              filters
                ? "Delete every job this filter matches (not only those shown)? Queued ones are cancelled; the devices keep their desired configuration."
                : "Delete every job of the organization? Queued ones are cancelled; the devices keep their desired configuration."
            }
            confirm="Delete"
            onConfirm={removeMatching}
          />
        )}
      </Group>
      {scope && (
        <Group gap="xs" data-testid="job-scope">
          <Text size="sm">
            {"group" in scope ? "The jobs of one act on devices" : "The jobs just started"} (and the filter above).
          </Text>
          <Anchor component={Link} to="/jobs" size="sm">
            Show every job
          </Anchor>
        </Group>
      )}
      <QueryState query={jobs} label="jobs">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title={filters || scope ? "No job matches" : "No jobs yet"}>
              {filters || scope
                ? "Change or clear the filter."
                : "A job is queued for a device whenever its configuration changes: approve a device, create a tunnel, change an interface."}
            </EmptyHint>
          ) : (
            <JobTable jobs={list} canDelete={canDelete} onDelete={removeOne} />
          )
        }
      </QueryState>
    </Stack>
  );
}

function JobTable({ jobs, canDelete, onDelete }: { jobs: Job[]; canDelete: boolean; onDelete: (job: Job) => Promise<void> }) {
  return (
    <>
      <Text size="sm" aria-live="polite">
        {jobs.length === SHOWN ? `The newest ${SHOWN} matching jobs` : `${jobs.length} jobs`}
      </Text>
      <Table.ScrollContainer minWidth={900}>
        <Table striped aria-label="Jobs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Created</Table.Th>
              <Table.Th>Device</Table.Th>
              <Table.Th>Type</Table.Th>
              <Table.Th>Tasks</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Duration</Table.Th>
              <Table.Th>Error</Table.Th>
              {canDelete && <Table.Th>Actions</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {jobs.map((j) => (
              <Table.Tr key={j.id} data-testid="job-row">
                <Table.Td>{new Date(j.createdAt).toLocaleString()}</Table.Td>
                <Table.Td>
                  <Anchor component={Link} to={`/devices/${j.device.id}`} size="sm">
                    {j.device.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{j.type}</Table.Td>
                <Table.Td>
                  <Text size="sm">{j.tasks.map((t) => t.summary || t.kind).join("; ")}</Text>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={j.state} />
                  {j.attempts > 1 && <Text size="xs">attempt {j.attempts}</Text>}
                </Table.Td>
                <Table.Td>{jobDuration(j)}</Table.Td>
                <Table.Td>
                  {j.state === "failed" && j.error?.message ? (
                    <Text size="sm" c="var(--mantine-color-error)">
                      {j.error.message} {j.error.reason && <Code>{j.error.reason}</Code>}
                    </Text>
                  ) : (
                    ""
                  )}
                </Table.Td>
                {canDelete && (
                  <Table.Td>
                    <ConfirmButton
                      size="xs"
                      variant="default"
                      label="Delete"
                      question={`Delete this ${j.type} job of ${j.device.name}?${j.state === "queued" ? " It is cancelled." : ""}`}
                      confirm="Delete"
                      onConfirm={() => onDelete(j)}
                    />
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
