/**
 * What can be rolled out and to what: the agent versions the fleet runs, the
 * account's packages and the keys they are signed with. Read-only: packages
 * and keys are made and uploaded with the operator's tool (the command shown).
 */
import { Code, Stack, Table, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { QueryState } from "../../components/QueryState.tsx";
import { useOrg } from "../../session/session-context.ts";
import { formatSize } from "./format.ts";
import { isForbidden, packagesQuery, signingKeysQuery, versionsQuery } from "./queries.ts";

export function FleetVersions() {
  const org = useOrg();
  const versions = useQuery(versionsQuery(org.id));
  return (
    <Stack gap="xs" component="section" aria-labelledby="fleet-versions">
      <Title order={2} size="h4" id="fleet-versions">
        Versions in the fleet
      </Title>
      <QueryState query={versions} label="the agent versions">
        {(list) =>
          list.length === 0 ? (
            <Text size="sm">No device has reported its agent version yet.</Text>
          ) : (
            <Table striped aria-label="Agent versions" w="auto">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Version</Table.Th>
                  <Table.Th>Devices</Table.Th>
                  <Table.Th>Connected</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((v) => (
                  <Table.Tr key={v.version} data-testid="version-row">
                    <Table.Td>{v.version || "unknown"}</Table.Td>
                    <Table.Td>{v.devices}</Table.Td>
                    <Table.Td>{v.connected}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )
        }
      </QueryState>
    </Stack>
  );
}

const ACCOUNT_ONLY = "Packages and signing keys belong to the account: only its managers and owners see them.";

export function Packages() {
  const org = useOrg();
  const packages = useQuery(packagesQuery(org.id));
  const keys = useQuery(signingKeysQuery(org.id));
  const keyName = new Map((keys.data ?? []).map((k) => [k.id, k.name]));
  if (isForbidden(packages.error)) return <EmptyHint title="Packages">{ACCOUNT_ONLY}</EmptyHint>;
  return (
    <Stack gap="xs" component="section" aria-labelledby="agent-packages">
      <Title order={2} size="h4" id="agent-packages">
        Packages
      </Title>
      <Text size="sm">
        Build, sign and upload a package with the operator&apos;s tool (account owners; the private key stays with you):
      </Text>
      <Code block data-testid="upload-command">
        {`node packaging/agent-package.mjs build --version <version>
node packaging/agent-package.mjs sign --key agent-signing.key tern-agent-<version>.tar.gz
node packaging/agent-package.mjs upload --server ${window.location.origin} --token <token> tern-agent-<version>.tar.gz`}
      </Code>
      <QueryState query={packages} label="the packages">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title="No packages yet">Upload one with the commands above; it is listed here to roll out.</EmptyHint>
          ) : (
            <Table.ScrollContainer minWidth={700}>
              <Table striped aria-label="Agent packages">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Version</Table.Th>
                    <Table.Th>Size</Table.Th>
                    <Table.Th>SHA-256</Table.Th>
                    <Table.Th>Signing key</Table.Th>
                    <Table.Th>Uploaded</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {list.map((p) => (
                    <Table.Tr key={p.id} data-testid="package-row">
                      <Table.Td>{p.version}</Table.Td>
                      <Table.Td>{formatSize(p.size)}</Table.Td>
                      <Table.Td>
                        <Code title={p.sha256}>{p.sha256.slice(0, 12)}…</Code>
                      </Table.Td>
                      <Table.Td>{keyName.get(p.signingKey) ?? p.signingKey}</Table.Td>
                      <Table.Td>
                        {new Date(p.createdAt).toLocaleString()} by {p.uploadedBy}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )
        }
      </QueryState>
      <SigningKeys />
    </Stack>
  );
}

function SigningKeys() {
  const org = useOrg();
  const keys = useQuery(signingKeysQuery(org.id));
  return (
    <Stack gap="xs" component="section" aria-labelledby="signing-keys">
      <Title order={3} size="h5" id="signing-keys">
        Signing keys
      </Title>
      <QueryState query={keys} label="the signing keys">
        {(list) =>
          list.length === 0 ? (
            <Text size="sm">
              None: make one with <Code>node packaging/agent-package.mjs keygen --out &lt;dir&gt;</Code> and register its public
              key (<Code>POST /api/agent-signing-keys</Code>); routers trust the keys of their own <Code>upgrade-keys</Code>{" "}
              setting.
            </Text>
          ) : (
            <Table striped aria-label="Signing keys" w="auto">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Public key</Table.Th>
                  <Table.Th>Registered</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((k) => (
                  <Table.Tr key={k.id}>
                    <Table.Td>{k.name}</Table.Td>
                    <Table.Td>
                      <Code>{k.publicKey}</Code>
                    </Table.Td>
                    <Table.Td>{new Date(k.createdAt).toLocaleString()}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )
        }
      </QueryState>
    </Stack>
  );
}
