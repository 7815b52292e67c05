/** What to do once the bot is set up: pair yourself as its owner. */
export function pairingSteps(username: string): string {
  return [
    `To talk to @${username}, pair yourself as its owner:`,
    "  1. guppy serve                         (keep it running)",
    `  2. send /start to @${username} in Telegram: it answers with a pairing code`,
    "  3. guppy pairing list telegram          (shows your request and its code)",
    "  4. guppy pairing approve telegram <code> --owner",
    "",
  ].join("\n");
}
