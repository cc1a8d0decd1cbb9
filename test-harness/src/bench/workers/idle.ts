/** Nothing but node with the tsx loader and the IPC channel: the runtime's own footprint, the agent's baseline. */
import { serve } from "./ipc.ts";

serve({}, {});
