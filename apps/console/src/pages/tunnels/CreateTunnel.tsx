/** Creates a tunnel between two devices: each end is a device and one of its WAN interfaces. */
import { Button, Group, Paper, Select, Stack, TextInput, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@tern/client";
import { useState } from "react";
import { devicesQuery } from "../../api/queries.ts";
import { tern } from "../../api/tern.ts";
import { ErrorAlert } from "../../components/QueryState.tsx";
import { useAction } from "../../components/useAction.ts";
import { useOrg } from "../../session/session-context.ts";
import { interfaceLabel, wanInterfaces } from "./figures.ts";
import { deviceQuery } from "./queries.ts";

function End({
  side,
  device,
  setDevice,
  iface,
  setIface,
  exclude,
}: {
  side: "A" | "B";
  device: string | null;
  setDevice: (id: string | null) => void;
  iface: string | null;
  setIface: (id: string | null) => void;
  exclude: string | null;
}) {
  const org = useOrg();
  const devices = useQuery(devicesQuery(org.id));
  const detail = useQuery(deviceQuery(org.id, device ?? ""));
  const options = (devices.data ?? [])
    .filter((d) => d.isApproved && d.id !== exclude)
    .map((d) => ({ value: d.id, label: d.name || d.hostname }))
    .sort((x, y) => x.label.localeCompare(y.label));
  const interfaces = wanInterfaces(detail.data).map((i) => ({ value: i.id, label: interfaceLabel(i) }));
  return (
    <Group grow align="flex-start">
      <Select
        label={`Device ${side}`}
        placeholder={devices.isPending ? "Loading devices…" : "Choose a device"}
        searchable
        data={options}
        value={device}
        onChange={(id) => {
          setDevice(id);
          setIface(null);
        }}
        nothingFoundMessage="No approved device matches"
      />
      <Select
        label={`WAN interface ${side}`}
        placeholder={!device ? "Choose the device first" : detail.isPending ? "Loading interfaces…" : "Choose an interface"}
        data={interfaces}
        value={iface}
        onChange={setIface}
        disabled={!device}
        error={
          detail.data && interfaces.length === 0 ? "No assigned WAN interface: assign one on the device's page first" : undefined
        }
      />
    </Group>
  );
}

export function CreateTunnel() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const action = useAction();
  const [deviceA, setDeviceA] = useState<string | null>(null);
  const [interfaceA, setInterfaceA] = useState<string | null>(null);
  const [deviceB, setDeviceB] = useState<string | null>(null);
  const [interfaceB, setInterfaceB] = useState<string | null>(null);
  const [description, setDescription] = useState("");
  const ready = deviceA && interfaceA && deviceB && interfaceB;

  const create = async () => {
    if (!ready) return;
    const done = await action.run(() =>
      ok(
        tern.api.POST("/api/tunnels", {
          body: { deviceA, interfaceA, deviceB, interfaceB, ...(description ? { description } : {}) },
        }),
      ),
    );
    await queryClient.invalidateQueries({ queryKey: ["tunnel", org.id] });
    if (done) {
      setDeviceB(null);
      setInterfaceB(null);
      setDescription("");
    }
  };

  return (
    <Paper withBorder p="md" component="section" aria-labelledby="create-tunnel">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <Stack gap="sm">
          <Title order={2} size="h4" id="create-tunnel">
            Create a tunnel
          </Title>
          <End side="A" device={deviceA} setDevice={setDeviceA} iface={interfaceA} setIface={setInterfaceA} exclude={deviceB} />
          <End side="B" device={deviceB} setDevice={setDeviceB} iface={interfaceB} setIface={setInterfaceB} exclude={deviceA} />
          <TextInput label="Description (optional)" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          {action.error !== null && <ErrorAlert title="The tunnel was not created" error={action.error} />}
          <Group justify="flex-end">
            <Button type="submit" disabled={!ready} loading={action.busy}>
              Create tunnel
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
