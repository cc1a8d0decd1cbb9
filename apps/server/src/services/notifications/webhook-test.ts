/**
 * `POST /notificationsConf/webhook/test`: one signed `test` delivery to the
 * organization's webhook through the real Deliverer, so an admin can check the
 * URL and the receiver's signature check before enabling the channel. One
 * attempt, no retries: the answer says at once what the receiver did.
 */

import { validationFailed } from "../../http/errors.ts";
import { Deliverer, type DeliveryResult } from "../../notify/delivery/index.ts";
import { webhookTargetPolicy } from "../../notify/delivery/webhook-target.ts";
import type { ServiceCtx } from "../context.ts";
import { assertWebhookTargetAllowed, loadWebhookChannel } from "./settings.ts";

const TEST_TIMEOUT_MS = 10_000;

export async function testWebhook(ctx: ServiceCtx): Promise<DeliveryResult> {
  const channel = await loadWebhookChannel(ctx);
  if (channel.url === "")
    throw validationFailed("no webhook URL is configured", [{ path: "url", message: "set the webhook URL first" }]);
  if (channel.secret === null)
    throw validationFailed("no webhook secret is configured", [{ path: "secret", message: "set the webhook secret first" }]);
  // A URL saved before targets were checked (or since refused by a changed setting) is refused here as well.
  await assertWebhookTargetAllowed(ctx, channel.url);
  const deliverer = new Deliverer({
    retry: { maxAttempts: 1 },
    webhookTimeoutMs: TEST_TIMEOUT_MS,
    logger: ctx.logger,
    webhookTargets: webhookTargetPolicy(ctx.config),
  });
  try {
    const [result] = await deliverer.deliver({
      event: "test",
      notification: null,
      // Enabled for the test even while the channel is off: testing comes before enabling.
      channels: { webhook: { enabled: true, url: channel.url, secret: channel.secret, minSeverity: channel.minSeverity } },
    });
    if (!result) throw new Error("the deliverer returned no webhook result");
    return result;
  } finally {
    await deliverer.close();
  }
}
