/** What the impairment backends work on. */
import type { Impairment } from "../../topology/schema.ts";

/** One attachment's desired impairment, with the namespace and interface it is applied on. */
export interface AttachmentTarget {
  id: string;
  cloudNs: string;
  /** The cloud's interface toward the node: impairment acts on its egress. */
  cloudIf: string;
  queue: number;
  impairment: Impairment;
}
