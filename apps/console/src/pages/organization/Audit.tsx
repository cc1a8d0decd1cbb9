/** The audit log: who changed what, newest first, filtered by actor, action or resource on the server. */
import { Code, Group, Stack, Table, Text, TextInput } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { ok } from "@tern/client";
import { useDeferredValue, useState } from "react";
import { type Filter, filterParam } from "../../api/filter.ts";
import { tern } from "../../api/tern.ts";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { useOrg } from "../../session/session-context.ts";
import { when } from "./shared.tsx";

const SHOWN = 200;

export function Audit() {
  const org = useOrg();
  const [search, setSearch] = useState({ actor: "", action: "", resource: "" });
  const deferred = useDeferredValue(search);
  const filters = filterParam(
    (Object.entries(deferred) as [keyof typeof search, string][])
      .filter(([, v]) => v.trim())
      .map(([key, v]): Filter => ({ key, op: "contains", val: v.trim() })),
  );
  const audit = useQuery({
    queryKey: ["organization", org.id, "audit", filters],
    queryFn: () =>
      ok(tern.api.GET("/api/audit", { params: { query: { filter: filters, sort: "at", order: "desc", limit: SHOWN } } })),
    placeholderData: (previous) => previous,
  });
  return (
    <Stack>
      <Group>
        <TextInput label="Who" value={search.actor} onChange={(e) => setSearch({ ...search, actor: e.currentTarget.value })} />
        <TextInput
          label="Action"
          value={search.action}
          onChange={(e) => setSearch({ ...search, action: e.currentTarget.value })}
        />
        <TextInput
          label="Resource"
          value={search.resource}
          onChange={(e) => setSearch({ ...search, resource: e.currentTarget.value })}
        />
      </Group>
      <QueryState query={audit} label="the audit log">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title={filters ? "Nothing matches" : "Nothing recorded yet"}>
              Every change made through the API or the console is recorded here with who made it.
            </EmptyHint>
          ) : (
            <>
              <Text size="sm">{list.length === SHOWN ? `The newest ${SHOWN} entries` : `${list.length} entries`}</Text>
              <Table.ScrollContainer minWidth={720}>
                <Table striped aria-label="Audit log">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>When</Table.Th>
                      <Table.Th>Who</Table.Th>
                      <Table.Th>Action</Table.Th>
                      <Table.Th>Resource</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {list.map((a) => (
                      <Table.Tr key={a.id}>
                        <Table.Td>{when(a.at)}</Table.Td>
                        <Table.Td>{a.actor}</Table.Td>
                        <Table.Td>
                          <Code>{a.action}</Code>
                        </Table.Td>
                        <Table.Td>
                          {a.resource}
                          {a.resourceId ? ` ${a.resourceId.slice(0, 8)}` : ""}
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
            </>
          )
        }
      </QueryState>
    </Stack>
  );
}
