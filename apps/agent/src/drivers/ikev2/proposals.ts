/**
 * IKE/ESP proposal strings. PFS is the ESP proposal carrying a DH group: with
 * `pfs` on, a proposal without one gets the IKE proposal's group appended;
 * with `pfs` off, DH groups are removed, so the flag is what decides.
 */
import { invalidConfig } from "../../errors.ts";

const DH = /^(modp\d+(s\d+)?|ecp\d+(bp)?|curve25519|curve448|x25519|x448)$/;
const PROPOSAL = /^[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*$/;

/** Splits "a-b-c, d-e" into proposals; throws INVALID_CONFIG at `path` for anything but algorithm tokens. */
export function parseProposals(text: string, path: string): string[] {
  const list = text.split(",").map((p) => p.trim());
  for (const p of list) {
    if (!PROPOSAL.test(p)) throw invalidConfig(path, `"${text}" is not a strongSwan proposal list (like aes256-sha256-modp2048)`);
  }
  return list;
}

/** DH groups named in one proposal. */
export function dhGroups(proposal: string): string[] {
  return proposal.split("-").filter((t) => DH.test(t));
}

/** The ESP proposal list as strongSwan gets it, PFS applied. */
export function espProposals(esp: { proposal: string; pfs: boolean }, ikeProposal: string, path: string): string {
  const list = parseProposals(esp.proposal, `${path}.esp.proposal`);
  if (!esp.pfs)
    return list
      .map((p) =>
        p
          .split("-")
          .filter((t) => !DH.test(t))
          .join("-"),
      )
      .join(",");
  const ikeGroup = parseProposals(ikeProposal, `${path}.ike.proposal`).flatMap(dhGroups)[0];
  return list
    .map((p) => {
      if (dhGroups(p).length > 0) return p;
      if (!ikeGroup) throw invalidConfig(`${path}.esp.pfs`, "PFS needs a DH group in the ESP or IKE proposal");
      return `${p}-${ikeGroup}`;
    })
    .join(",");
}
