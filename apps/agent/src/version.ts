/** The agent's version, from its package.json (one source of truth; the bundler inlines it). */
import pkg from "../package.json" with { type: "json" };

export const AGENT_VERSION: string = pkg.version;
