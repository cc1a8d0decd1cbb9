/**
 * What the policy driver owns (docs/agent-network.md):
 * - nft table `inet tern_policy` (marks LAN-side traffic per rule);
 * - fwmark bits 16–23 (`0x00ff0000`): rule slot i (by priority) marks `(i+1) << 16`;
 * - `ip rule` priorities 30000–30254: slot i is `fwmark (i+1)<<16/0xff0000 lookup 30000+i`;
 * - routing tables 30000–30254: slot i's table holds one default route to the
 *   link chosen for the rule (none for fallback `by-destination`, so lookups
 *   fall through to main; `blackhole` for fallback `drop`).
 * - `ip rule` priorities 29745–29999: for a rule with a `peer` action (cloud
 *   security), slot i also has `fwmark … lookup main suppress_prefixlength 0`
 *   at 29745+i, ahead of its table: marked traffic keeps every main-table
 *   route but the default one, so only internet-bound traffic goes to the peer.
 */
export const POLICY_TABLE = { family: "inet", name: "tern_policy" } as const;
export const MARK_MASK = 0x00ff0000;
export const RULE_BASE = 30000;
export const MAX_RULES = 255;

/** First priority of the internet-only rules (one per slot, just below RULE_BASE). */
export const SUPPRESS_BASE = RULE_BASE - MAX_RULES;

export const slotMark = (slot: number) => (slot + 1) << 16;
export const slotTable = (slot: number) => RULE_BASE + slot;
export const slotSuppress = (slot: number) => SUPPRESS_BASE + slot;
export const hex = (n: number) => `0x${n.toString(16)}`;
