/**
 * Create or edit a peer connection. Creating is two API calls: the peer
 * (POST /api/peers), then the tunnel from the chosen device's WAN interface
 * to it (POST /api/tunnels with `peer`); when the tunnel is refused the new
 * peer is deleted again, so a refusal leaves nothing half made. Editing
 * replaces the peer (PUT, the whole body); the pre-shared key is write-only:
 * never shown, kept unless a new one is typed. The API's refusals are shown
 * on the fields they name, with their machine code.
 */
import {
  Accordion,
  Button,
  Group,
  Modal,
  NumberInput,
  PasswordInput,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  TagsInput,
  Text,
  TextInput,
} from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok, type Peer } from "@tern/client";
import { useState } from "react";
import { devicesQuery } from "../../api/queries.ts";
import { tern } from "../../api/tern.ts";
import { ErrorAlert } from "../../components/QueryState.tsx";
import { useOrg } from "../../session/session-context.ts";
import { deviceDetailQuery, deviceOptions, wanOptions } from "./device-end.ts";
import { PresetSelect } from "./PresetSelect.tsx";
import {
  applyPreset,
  CRYPTO_ALGS,
  DH_GROUPS,
  fieldErrors,
  fromPeer,
  ID_TYPES,
  INTEG_ALGS,
  PEER_DEFAULTS,
  type PeerField,
  type PeerFormState,
  peerBody,
} from "./peer-form.ts";

type Errors = Partial<Record<PeerField, string>>;

export function PeerForm({ peer, opened, onClose }: { peer: Peer | null; opened: boolean; onClose: () => void }) {
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      size="xl"
      title={peer ? `Edit peer ${peer.name}` : "New peer connection"}
      closeOnClickOutside={false}
      closeButtonProps={{ "aria-label": "Close the form" }}
    >
      {/* Mounted per opening: the form starts from the peer (or the defaults) each time. */}
      {opened && <PeerFormBody peer={peer} onDone={onClose} />}
    </Modal>
  );
}

function PeerFormBody({ peer, onDone }: { peer: Peer | null; onDone: () => void }) {
  const org = useOrg();
  const queryClient = useQueryClient();
  const [state, setState] = useState<PeerFormState>(() => (peer ? fromPeer(peer) : PEER_DEFAULTS));
  const [errors, setErrors] = useState<Errors>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = <K extends PeerField>(key: K, value: PeerFormState[K]) => {
    setState((s) => ({ ...s, [key]: value }));
    setErrors((e) => ({ ...e, [key]: undefined }));
  };
  const creating = peer === null;

  const refused = (error: unknown, step: "peer" | "tunnel") => {
    const { fields, rest } = fieldErrors(error, step);
    setErrors(fields);
    setFailure(rest ? error : null);
  };

  const save = async () => {
    setFailure(null);
    if (creating && (!state.device || !state.iface)) {
      setErrors({
        device: state.device ? undefined : "Choose the device that connects to the peer",
        iface: state.iface ? undefined : "Choose its WAN interface",
      });
      return;
    }
    setBusy(true);
    try {
      if (peer) {
        try {
          await ok(tern.api.PUT("/api/peers/{id}", { params: { path: { id: peer.id } }, body: peerBody(state) as never }));
        } catch (error) {
          return refused(error, "peer");
        }
      } else {
        let created: Peer;
        try {
          created = await ok(tern.api.POST("/api/peers", { body: peerBody(state) as never }));
        } catch (error) {
          return refused(error, "peer");
        }
        try {
          await ok(
            tern.api.POST("/api/tunnels", {
              body: { deviceA: state.device!, interfaceA: state.iface!, peer: created.id } as never,
            }),
          );
        } catch (error) {
          await ok(tern.api.DELETE("/api/peers/{id}", { params: { path: { id: created.id } } })).catch(() => {});
          return refused(error, "tunnel");
        }
      }
      await queryClient.invalidateQueries({ queryKey: ["tunnel", org.id] });
      onDone();
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <Stack gap="sm">
        <PresetSelect
          value={state.preset}
          onChange={(preset) => {
            setState((s) => applyPreset(s, preset));
            setErrors((e) => ({ ...e, preset: undefined }));
          }}
          error={errors.preset}
        />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput
            label="Name"
            required
            value={state.name}
            onChange={(e) => set("name", e.currentTarget.value)}
            error={errors.name}
            data-autofocus
          />
          <TextInput
            label="Remote endpoint (IPv4)"
            description="The peer gateway's public address"
            required
            value={state.remoteIP}
            onChange={(e) => set("remoteIP", e.currentTarget.value)}
            error={errors.remoteIP}
          />
        </SimpleGrid>
        {creating && <DeviceEnd state={state} set={set} errors={errors} />}
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <Group grow align="flex-start" gap="xs">
            <Select
              label="Local id type"
              data={ID_TYPES}
              allowDeselect={false}
              value={state.idType}
              onChange={(v) => v && set("idType", v as PeerFormState["idType"])}
              error={errors.idType}
            />
            <TextInput
              label="Local id"
              placeholder="interface address"
              value={state.localId}
              onChange={(e) => set("localId", e.currentTarget.value)}
              error={errors.localId}
            />
          </Group>
          <Group grow align="flex-start" gap="xs">
            <Select
              label="Remote id type"
              data={ID_TYPES}
              allowDeselect={false}
              value={state.remoteIdType}
              onChange={(v) => v && set("remoteIdType", v as PeerFormState["remoteIdType"])}
              error={errors.remoteIdType}
            />
            <TextInput
              label="Remote id"
              placeholder="remote endpoint"
              value={state.remoteId}
              onChange={(e) => set("remoteId", e.currentTarget.value)}
              error={errors.remoteId}
            />
          </Group>
        </SimpleGrid>
        <PasswordInput
          label="Pre-shared key"
          description={
            creating
              ? "8 to 255 characters; stored encrypted and never shown again"
              : "Write-only: leave empty to keep the current key, or type a new one"
          }
          required={creating}
          autoComplete="new-password"
          value={state.psk}
          onChange={(e) => set("psk", e.currentTarget.value)}
          error={errors.psk}
        />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TagsInput
            label="Remote LAN subnets"
            description="Behind the peer, e.g. 10.20.0.0/16 (Enter after each)"
            required
            value={state.remoteTrafficSelectors}
            onChange={(v) => set("remoteTrafficSelectors", v)}
            error={errors.remoteTrafficSelectors}
            splitChars={[",", " "]}
          />
          <TagsInput
            label="Local LAN subnets"
            description="Empty: the device's LANs"
            value={state.localTrafficSelectors}
            onChange={(v) => set("localTrafficSelectors", v)}
            error={errors.localTrafficSelectors}
            splitChars={[",", " "]}
          />
        </SimpleGrid>
        <TagsInput
          label="Health-check targets (IPv4)"
          description="Hosts behind the peer probed through the tunnel for loss, RTT and jitter"
          value={state.ips}
          onChange={(v) => set("ips", v)}
          error={errors.ips}
          splitChars={[",", " "]}
        />
        <Proposals state={state} set={set} errors={errors} />
        {failure !== null && (
          <ErrorAlert title={creating ? "The peer was not created" : "The peer was not saved"} error={failure} />
        )}
        {Object.values(errors).some(Boolean) && failure === null && (
          <Text size="sm" c="var(--tern-bad)" role="alert">
            The server refused some fields: see the messages above.
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={busy}>
            {creating ? "Create peer" : "Save peer"}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

interface Part {
  state: PeerFormState;
  set: <K extends PeerField>(key: K, value: PeerFormState[K]) => void;
  errors: Errors;
}

function DeviceEnd({ state, set, errors }: Part) {
  const org = useOrg();
  const devices = useQuery(devicesQuery(org.id));
  const detail = useQuery(deviceDetailQuery(org.id, state.device));
  const interfaces = wanOptions(detail.data);
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }}>
      <Select
        label="Device"
        description="The router of the fleet that connects to the peer"
        required
        searchable
        placeholder={devices.isPending ? "Loading devices…" : "Choose a device"}
        data={deviceOptions(devices.data)}
        value={state.device}
        onChange={(id) => {
          set("device", id);
          set("iface", null);
        }}
        nothingFoundMessage="No approved device matches"
        error={errors.device}
      />
      <Select
        label="WAN interface"
        description="The tunnel starts from this interface"
        required
        placeholder={!state.device ? "Choose the device first" : detail.isPending ? "Loading interfaces…" : "Choose an interface"}
        data={interfaces}
        value={state.iface}
        onChange={(id) => set("iface", id)}
        disabled={!state.device}
        error={
          errors.iface ??
          (detail.data && interfaces.length === 0
            ? "No assigned WAN interface: assign one on the device's page first"
            : undefined)
        }
      />
    </SimpleGrid>
  );
}

/** IKE (phase 1) and ESP (phase 2) proposals, folded: the defaults suit most gateways. */
function Proposals({ state, set, errors }: Part) {
  const summary = (p: "ike" | "esp") =>
    `${state[`${p}CryptoAlg`]}-${state[`${p}KeySize`]} ${state[`${p}IntegAlg`]} ${state[`${p}DhGroup`]}`;
  const hasError =
    Boolean(errors.ikeLifeTime || errors.sessionLifeTime) ||
    (["ike", "esp"] as const).some((p) =>
      (["CryptoAlg", "KeySize", "IntegAlg", "DhGroup"] as const).some((f) => errors[`${p}${f}`]),
    );
  const [open, setOpen] = useState<string | null>(null);
  // A refused proposal field opens the section, so its message is seen.
  return (
    <Accordion variant="contained" value={hasError ? "proposals" : open} onChange={setOpen}>
      <Accordion.Item value="proposals">
        <Accordion.Control>
          Proposals: IKEv{state.ikeVersion} {summary("ike")} · ESP {summary("esp")}
          {state.pfs ? " · PFS" : ""} · DPD {state.dpdDelay} s
        </Accordion.Control>
        <Accordion.Panel>
          <Stack gap="sm">
            {(["ike", "esp"] as const).map((p) => (
              <SimpleGrid key={p} cols={{ base: 2, sm: 5 }}>
                <Select
                  label={`${p.toUpperCase()} encryption`}
                  data={CRYPTO_ALGS}
                  allowDeselect={false}
                  value={state[`${p}CryptoAlg`]}
                  onChange={(v) => v && set(`${p}CryptoAlg`, v as PeerFormState["ikeCryptoAlg"])}
                  error={errors[`${p}CryptoAlg`]}
                />
                <Select
                  label={`${p.toUpperCase()} key size`}
                  data={["128", "256"]}
                  allowDeselect={false}
                  value={state[`${p}KeySize`]}
                  onChange={(v) => v && set(`${p}KeySize`, v as "128" | "256")}
                  error={errors[`${p}KeySize`]}
                />
                <Select
                  label={`${p.toUpperCase()} integrity`}
                  data={INTEG_ALGS}
                  allowDeselect={false}
                  value={state[`${p}IntegAlg`]}
                  onChange={(v) => v && set(`${p}IntegAlg`, v as PeerFormState["ikeIntegAlg"])}
                  error={errors[`${p}IntegAlg`]}
                />
                <Select
                  label={`${p.toUpperCase()} DH group`}
                  data={DH_GROUPS}
                  allowDeselect={false}
                  value={state[`${p}DhGroup`]}
                  onChange={(v) => v && set(`${p}DhGroup`, v as PeerFormState["ikeDhGroup"])}
                  error={errors[`${p}DhGroup`]}
                />
                <NumberInput
                  label={p === "ike" ? "IKE lifetime (s)" : "ESP lifetime (s)"}
                  min={300}
                  value={p === "ike" ? state.ikeLifeTime : state.sessionLifeTime}
                  onChange={(v) => set(p === "ike" ? "ikeLifeTime" : "sessionLifeTime", Number(v) || 0)}
                  error={p === "ike" ? errors.ikeLifeTime : errors.sessionLifeTime}
                />
              </SimpleGrid>
            ))}
            <Switch
              label="Perfect forward secrecy on ESP rekeys"
              checked={state.pfs}
              onChange={(e) => set("pfs", e.currentTarget.checked)}
            />
          </Stack>
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  );
}
