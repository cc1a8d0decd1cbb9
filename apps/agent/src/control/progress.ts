/**
 * Output lines of a running request, sent to the server as `request-progress`
 * messages: lines that come within FLUSH_MS of each other go in one message
 * (at most PROGRESS_MAX_LINES, each cut to PROGRESS_LINE_CHARS), so a fast
 * command does not run into the server's per-device message rate.
 */
import { type DeviceMessage, PROGRESS_LINE_CHARS, PROGRESS_MAX_LINES } from "@tern/protocol";

const FLUSH_MS = 50;

export class ProgressSender {
  private seq = 0;
  private lines: string[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly id: string,
    private readonly send: (message: DeviceMessage) => void,
  ) {}

  line(line: string): void {
    this.lines.push(line.slice(0, PROGRESS_LINE_CHARS));
    if (this.lines.length >= PROGRESS_MAX_LINES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Sends what is waiting (before the final response). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length === 0) return;
    const lines = this.lines;
    this.lines = [];
    this.send({ type: "request-progress", id: this.id, seq: this.seq++, lines });
  }
}
