import { tokenValue } from "@guppy/core/config";
import { accessPolicySetting } from "../../access/access-settings.js";
import { defineChannel } from "../channel.js";
import { info } from "./info.js";

/** Slack: Socket Mode with a bot token and an app-level token (docs/channels.md#slack). */
export const slack = defineChannel({
  ...info,
  settings: {
    slackBotToken: {
      env: "SLACK_BOT_TOKEN",
      parse: tokenValue,
      secret: true,
      description: "Slack bot token (xoxb-...)",
    },
    slackAppToken: {
      env: "SLACK_APP_TOKEN",
      parse: tokenValue,
      secret: true,
      description: "Slack app-level token for Socket Mode (xapp-...)",
    },
    ...accessPolicySetting(info.name, info.label),
  },
  access: true,
  // Either token turns it on: the start then says which one is missing.
  enabled: (config) => Boolean(config.slackBotToken || config.slackAppToken),
  load: async () => (await import("./create-slack-channel.js")).createSlackChannel(info),
});
