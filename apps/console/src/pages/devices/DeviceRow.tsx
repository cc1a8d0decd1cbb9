/**
 * One row of the devices table, in plain elements styled by CSS classes
 * (devices.module.css), drawn like Mantine's Checkbox, Anchor, Badge and
 * compact Buttons. Why not those components: a fast scroll mounts a new
 * window of rows every frame, and eight Mantine components per row (each
 * resolving theme, props, styles and variables on mount) made frames of
 * 50–135 ms (long tasks). A plain row mounts in a fraction of that. The row
 * is memoized and its callbacks are stable, so rows already on screen do not
 * re-render while scrolling; only its vertical offset is an inline style.
 */
import type { DeviceSummary } from "@tern/client";
import { memo } from "react";
import { Link } from "react-router";
import { type DeviceStatus, isRateLimited, statusOf } from "./device-rows.ts";
import classes from "./devices.module.css";

/** Fixed row height in px (also in devices.module.css): the virtualizer never measures a row. */
export const ROW_HEIGHT = 44;

export interface RowActions {
  canApprove: boolean;
  canDelete: boolean;
  onToggle: (id: string) => void;
  onApprove: (id: string) => void;
  onDelete: (device: DeviceSummary) => void;
}

const STATUS_CLASS: Record<DeviceStatus, string> = {
  online: classes.ok!,
  offline: classes.bad!,
  pending: classes.warn!,
};

export const DeviceRow = memo(function DeviceRow({
  device: d,
  index,
  start,
  checked,
  canApprove,
  canDelete,
  onToggle,
  onApprove,
  onDelete,
}: RowActions & { device: DeviceSummary; index: number; start: number; checked: boolean }) {
  const status = statusOf(d);
  return (
    <tr
      aria-rowindex={index + 2}
      className={`${classes.row} ${classes.bodyRow}`}
      data-testid="device-row"
      style={{ transform: `translateY(${start}px)` }}
    >
      <td className={classes.cell}>
        <input
          type="checkbox"
          className={classes.checkbox}
          aria-label={`Select ${d.name}`}
          checked={checked}
          onChange={() => onToggle(d.id)}
        />
      </td>
      <td className={classes.cell}>
        <Link to={`/devices/${d.id}`} className={`${classes.link} ${classes.truncate}`}>
          {d.name}
        </Link>
      </td>
      <td className={`${classes.cell} ${classes.text} ${classes.truncate}`}>{d.hostname}</td>
      <td className={classes.cell}>
        <span className={`${classes.badge} ${STATUS_CLASS[status]}`}>{status}</span>
      </td>
      <td className={classes.cell}>
        {d.pendingNotifications > 0 ? (
          <span className={`${classes.badge} ${classes.warn}`}>
            {d.pendingNotifications}
            <span className={classes.hidden}> pending notifications</span>
          </span>
        ) : (
          <span className={classes.text}>0</span>
        )}
      </td>
      <td className={classes.cell}>
        {isRateLimited(d) && (
          <span className={`${classes.badge} ${classes.flag}`} title="An interface's public address is rate-limited">
            rate-limited
          </span>
        )}
      </td>
      <td className={`${classes.cell} ${classes.actions}`}>
        {canApprove && !d.isApproved && (
          <button
            type="button"
            className={`${classes.button} ${classes.filled}`}
            onClick={() => onApprove(d.id)}
            aria-label={`Approve ${d.name}`}
          >
            Approve
          </button>
        )}
        {canDelete && (
          <button
            type="button"
            className={`${classes.button} ${classes.outlined}`}
            aria-label={`Delete ${d.name}`}
            onClick={() => onDelete(d)}
          >
            Delete
          </button>
        )}
      </td>
    </tr>
  );
});
