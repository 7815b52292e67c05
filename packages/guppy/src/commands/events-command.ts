import { join } from "node:path";
import {
  addEvent,
  deleteEvent,
  describeTarget,
  EVENT_TYPES,
  EVENTS_DIR,
  type EventSpec,
  localTime,
  nextRun,
  readEventFiles,
  scheduleForm,
} from "@guppy/core/events";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { sessionThreadId } from "../cli/session-thread-id.js";
import { loadCliConfig } from "./load-cli-config.js";

const USAGE = "guppy events list | add --type T --text TEXT [...] | rm <id>";

/**
 * `guppy events list | add | rm`: the scheduled events of GUPPY_HOME. The files in
 * `<home>/events/` are the source of truth: this reads and writes them (a running gateway's bus
 * picks the change up through its watcher), so it works whether a gateway runs or not.
 */
export async function eventsCommand(args: CliArgs): Promise<number> {
  const [sub, ...rest] = args.positionals;
  const config = loadCliConfig(args);
  const dir = join(config.home, EVENTS_DIR);
  const zone = config.timezone;
  const eventFlagsGiven = Object.keys(args.eventFlags).length > 0;
  if (sub !== "add" && eventFlagsGiven) {
    throw new UsageError(`--${Object.keys(args.eventFlags)[0]} is for "guppy events add"`);
  }
  switch (sub) {
    case "list":
    case undefined: {
      rejectExtraArguments({ ...args, positionals: rest }, "guppy events list");
      return list(dir, zone);
    }
    case "add":
      rejectExtraArguments({ ...args, positionals: rest }, "guppy events add");
      return add(args, dir, zone);
    case "rm": {
      const [id, ...extra] = rest;
      if (!id) throw new UsageError("guppy events rm needs the event's id (see guppy events list)");
      rejectExtraArguments({ ...args, positionals: extra }, "guppy events rm <id>");
      if (!deleteEvent(dir, id)) {
        throw new UsageError(`no event "${id}" in ${dir} (see guppy events list)`);
      }
      process.stdout.write(`Removed event ${id}.\n`);
      return ExitCode.ok;
    }
    default:
      throw new UsageError(`unknown events command "${sub}" (usage: ${USAGE})`);
  }
}

function list(dir: string, zone: string | undefined): number {
  const { events, problems } = readEventFiles(dir);
  for (const p of problems) {
    process.stderr.write(`guppy: warning: ${join(dir, p.file)}: ${p.problem}\n`);
  }
  if (events.length === 0) {
    process.stdout.write(`No scheduled events in ${dir}.\n`);
    return ExitCode.ok;
  }
  const now = Date.now();
  const rows = events.map((e) => {
    const at = nextRun(e, now, zone);
    return [
      e.id,
      e.type,
      describeTarget(e),
      e.schedule ? `${e.schedule}${e.timezone ? ` (${e.timezone})` : ""}` : "-",
      scheduleForm(e.type) === "none" ? "now" : at === undefined ? "never" : localTime(at, zone),
    ];
  });
  const header = ["ID", "TYPE", "TARGET", "SCHEDULE", "NEXT RUN"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  ");
  process.stdout.write(`${[header, ...rows].map(line).join("\n")}\n`);
  return ExitCode.ok;
}

function add(args: CliArgs, dir: string, zone: string | undefined): number {
  const f = args.eventFlags;
  if (!f.type) throw new UsageError(`guppy events add needs --type ${EVENT_TYPES.join("|")}`);
  const channel = f.adapter !== undefined || f.channel !== undefined;
  if (channel && args.thread !== undefined) {
    throw new UsageError("give --thread, or --adapter and --channel, not both");
  }
  const timezone = args.configFlags.timezone;
  const added = addEvent(dir, f.id, {
    type: f.type,
    text: f.text,
    ...(channel
      ? { adapterId: f.adapter, channelId: f.channel }
      : { threadId: args.thread ?? sessionThreadId(args.session) }),
    ...(f.schedule !== undefined ? { schedule: f.schedule } : {}),
    ...(typeof timezone === "string" ? { timezone } : {}),
  });
  if (!added.ok) {
    const hint = added.reason === "exists" ? ` (guppy events rm ${f.id} first)` : "";
    throw new UsageError(`${flagProblem(added.problem)}${hint}`);
  }
  const event: EventSpec = added.event;
  const id = event.id;
  const at = nextRun(event, Date.now(), zone);
  const when = at === undefined ? "never" : localTime(at, event.timezone ?? zone);
  process.stdout.write(
    `Added event ${id} (${event.type}) for ${describeTarget(event)}; next run ${when}.\n`,
  );
  return ExitCode.ok;
}

/** A file field's name in a problem, as the flag that sets it: `"schedule"` → `--schedule`. */
function flagProblem(problem: string): string {
  const flags: Record<string, string> = {
    id: "--id",
    type: "--type",
    text: "--text",
    schedule: "--schedule",
    timezone: "--timezone",
    threadId: "--thread",
    adapterId: "--adapter",
    channelId: "--channel",
  };
  return problem.replace(
    /"(id|type|text|schedule|timezone|threadId|adapterId|channelId)"/g,
    (_m, k: string) => flags[k] ?? k,
  );
}
