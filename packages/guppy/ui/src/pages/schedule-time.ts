// The Schedules page's times: cron expressions in words, the browser's local time for a
// datetime-local input and back to an ISO time with the browser's offset (the gateway reads a
// one-shot's offset, so the time the user picked is the time it fires, whatever the gateway's
// GUPPY_TIMEZONE).

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

const two = (n: number) => String(n).padStart(2, "0");
const isNumber = (field: string) => /^\d+$/.test(field);

function dayName(field: string): string | undefined {
  if (!isNumber(field)) return undefined;
  const n = Number(field);
  return n >= 0 && n <= 7 ? DAYS[n % 7] : undefined;
}

/** `1-5` → weekdays, `0,6` → weekends, `1` → Mondays, `1,5` → Mondays and Fridays. */
function daysWords(field: string): string | undefined {
  if (field === "*") return "every day";
  if (field === "1-5") return "weekdays";
  if (field === "0,6" || field === "6,0" || field === "6,7" || field === "6-7") return "weekends";
  const names = field.split(",").map(dayName);
  if (names.some((n) => n === undefined)) return undefined;
  const plural = names.map((n) => `${n}s`);
  return plural.length === 1
    ? `${plural[0]}`
    : `${plural.slice(0, -1).join(", ")} and ${plural[plural.length - 1]}`;
}

/**
 * A cron expression in words when it is a simple one (`0 9 * * 1-5` → "weekdays at 09:00"),
 * else undefined: the page then shows the expression alone rather than a guess.
 */
export function cronWords(expression: string): string | undefined {
  let fields = expression.trim().split(/\s+/);
  if (fields.length === 6) {
    const [seconds, ...rest] = fields as [string, ...string[]];
    const everyN = /^\*\/(\d+)$/.exec(seconds);
    if (everyN && rest.every((f) => f === "*")) return `every ${everyN[1]} seconds`;
    if (seconds !== "0") return undefined;
    fields = rest;
  }
  if (fields.length !== 5) return undefined;
  const [minute, hour, day, month, weekday] = fields as [string, string, string, string, string];
  if (month !== "*") return undefined;
  if (day === "*" && weekday === "*") {
    if (minute === "*" && hour === "*") return "every minute";
    const minutes = /^\*\/(\d+)$/.exec(minute);
    if (minutes && hour === "*") return `every ${minutes[1]} minutes`;
    if (isNumber(minute) && hour === "*") return `every hour at :${two(Number(minute))}`;
    const hours = /^\*\/(\d+)$/.exec(hour);
    if (hours && isNumber(minute)) {
      return `every ${hours[1]} hours at :${two(Number(minute))}`;
    }
  }
  if (!isNumber(minute) || !isNumber(hour)) return undefined;
  const at = `at ${two(Number(hour))}:${two(Number(minute))}`;
  if (day === "*") {
    const days = daysWords(weekday);
    return days ? `${days} ${at}` : undefined;
  }
  if (isNumber(day) && weekday === "*") return `monthly on day ${Number(day)} ${at}`;
  return undefined;
}

/** The browser's IANA zone (`Europe/Berlin`), as the gateway names zones. */
export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** `+05:30`: the browser's offset from UTC at `date`. */
export function offsetText(date: Date): string {
  const minutes = -date.getTimezoneOffset();
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}

/** `2026-11-27T21:00:05`: `date` in the browser's local time, as a datetime-local input holds it. */
export function localInputValue(date: Date): string {
  return (
    `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}` +
    `T${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`
  );
}

/**
 * A datetime-local input's value (the browser's local time) as an ISO time with the browser's
 * offset at that moment (`2026-11-27T21:00:05+05:30`); undefined when it is no time.
 */
export function isoWithOffset(localValue: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(localValue)) return undefined;
  // A date-time without a zone is read as local time by the browser.
  const date = new Date(localValue);
  if (Number.isNaN(date.getTime())) return undefined;
  return `${localInputValue(date)}${offsetText(date)}`;
}
