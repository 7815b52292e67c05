import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, type Logger, silentLogger } from "@guppy/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccessStore } from "../../src/access/access-store.js";
import type { AccessPolicy } from "../../src/access/access-types.js";
import { createAccessControl, PAIRING_TTL_MS } from "../../src/access/create-access-control.js";

let home: string;
let clock: number;

function control(policy: AccessPolicy, allowedUsers: string[] = []) {
  return createAccessControl({
    store: createAccessStore(home),
    settings: () => ({ policy, allowedUsers }),
    logger: silentLogger,
    now: () => clock,
  });
}

function refusals(): Array<Record<string, unknown>> {
  return readFileSync(join(home, "access", "refusals.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "guppy-access-"));
  clock = Date.parse("2026-01-01T00:00:00Z");
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe("access policies", () => {
  it("open admits anyone; disabled refuses everyone and logs it", () => {
    expect(control("open").check("telegram", { id: "1" })).toEqual({
      kind: "allow",
      role: "guest",
    });
    const d = control("disabled").check("telegram", { id: "1", name: "eve" });
    expect(d).toEqual({ kind: "refuse", reason: "disabled" });
    expect(refusals()).toMatchObject([{ channel: "telegram", userId: "1", reason: "disabled" }]);
  });

  it("allowlist admits listed ids only", () => {
    const access = control("allowlist", ["42"]);
    expect(access.check("slack", { id: "42" }).kind).toBe("allow");
    expect(access.check("slack", { id: "43" })).toEqual({
      kind: "refuse",
      reason: "not-allowlisted",
    });
    expect(refusals()).toHaveLength(1);
  });
});

describe("pairing", () => {
  it("gives an unknown user a code, the same code again, and admits them once approved", () => {
    const access = control("pairing");
    const first = access.check("telegram", { id: "7", name: "ann" });
    if (first.kind !== "pair") throw new Error(`expected a pairing code, got ${first.kind}`);
    expect(first.code).toMatch(/^[A-Z2-9]{8}$/);
    expect(first.reply).toContain(`guppy pairing approve telegram ${first.code}`);
    expect(access.check("telegram", { id: "7" })).toMatchObject({ kind: "pair", code: first.code });
    expect(access.approvePairing("telegram", "nope")).toBeUndefined();
    expect(access.approvePairing("telegram", first.code.toLowerCase())).toMatchObject({
      id: "7",
      via: "pairing",
    });
    expect(access.check("telegram", { id: "7" })).toEqual({ kind: "allow", role: "guest" });
    expect(access.pendingPairings("telegram")).toEqual([]);
    // Approval is per channel.
    expect(access.check("slack", { id: "7" }).kind).toBe("pair");
  });

  it("announces each new request once (not the same code given again), and leaves a welcome for each approval", () => {
    const requests: Array<[string, string, string]> = [];
    const access = createAccessControl({
      store: createAccessStore(home),
      settings: () => ({ policy: "pairing", allowedUsers: [] }),
      logger: silentLogger,
      now: () => clock,
      onPairingRequest: (channel, request) =>
        requests.push([channel, request.userId, request.code]),
    });
    const first = access.check("telegram", { id: "7", name: "ann" });
    access.check("telegram", { id: "7", name: "ann" });
    access.check("telegram", { id: "8" }, "group");
    if (first.kind !== "pair") throw new Error("expected a pairing code");
    expect(requests).toEqual([["telegram", "7", first.code]]);
    // Expired, a new code is a new request.
    clock += PAIRING_TTL_MS + 1;
    const second = access.check("telegram", { id: "7", name: "ann" });
    if (second.kind !== "pair") throw new Error("expected a pairing code");
    expect(requests.map(([, , code]) => code)).toEqual([first.code, second.code]);

    expect(access.welcomes("telegram")).toEqual([]);
    access.approvePairing("telegram", second.code, "owner");
    expect(access.welcomes("telegram")).toEqual([
      { userId: "7", userName: "ann", role: "owner", approvedAt: new Date(clock).toISOString() },
    ]);
    access.welcomed("telegram", "7");
    expect(access.welcomes("telegram")).toEqual([]);
  });

  it("revoke takes an approved user out at once, with their welcome; an allowlisted one stays", () => {
    const access = control("pairing", ["42"]);
    const asked = access.check("telegram", { id: "7" });
    if (asked.kind !== "pair") throw new Error("expected a pairing code");
    access.approvePairing("telegram", asked.code);
    expect(access.revoke("telegram", "7")).toMatchObject({
      kind: "revoked",
      user: { id: "7", role: "guest" },
    });
    expect(access.welcomes("telegram")).toEqual([]);
    expect(access.check("telegram", { id: "7" }).kind).toBe("pair");
    expect(access.revoke("telegram", "7")).toEqual({ kind: "unknown" });
    expect(access.revoke("telegram", "42")).toMatchObject({ kind: "allowlisted" });
    expect(access.check("telegram", { id: "42" })).toEqual({ kind: "allow", role: "owner" });
  });

  it("gives no code in a group chat and keeps no pending slot for it; the user's private chat still gets one", () => {
    const access = control("pairing", ["42"]);
    for (const id of ["1", "2", "3", "4"]) {
      expect(access.check("telegram", { id }, "group")).toEqual({
        kind: "refuse",
        reason: "not-allowlisted",
      });
    }
    expect(access.pendingPairings("telegram")).toEqual([]);
    expect(refusals()[0]).toMatchObject({ userId: "1", detail: expect.stringMatching(/group/) });
    expect(access.check("telegram", { id: "42" }, "group")).toEqual({
      kind: "allow",
      role: "owner",
    });
    expect(access.check("telegram", { id: "1" }, "private").kind).toBe("pair");
  });

  it("holds at most three pending codes and lets them expire after an hour", () => {
    const access = control("pairing");
    for (const id of ["1", "2", "3"]) expect(access.check("telegram", { id }).kind).toBe("pair");
    expect(access.check("telegram", { id: "4" })).toEqual({
      kind: "refuse",
      reason: "pairing-full",
    });
    const stale = access.pendingPairings("telegram")[0]?.code ?? "";
    clock += PAIRING_TTL_MS + 1;
    expect(access.approvePairing("telegram", stale)).toBeUndefined();
    expect(access.check("telegram", { id: "4" }).kind).toBe("pair");
    expect(access.pendingPairings("telegram")).toHaveLength(1);
  });
});

describe("invites", () => {
  it("admits the user who redeems a one-time code, once", () => {
    const access = control("pairing");
    const code = access.createInvite("telegram");
    expect(access.redeemInvite("telegram", { id: "9" }, code)).toEqual({
      kind: "allow",
      role: "guest",
    });
    expect(access.check("telegram", { id: "9" })).toEqual({ kind: "allow", role: "guest" });
    expect(access.redeemInvite("telegram", { id: "10" }, code)).toMatchObject({
      kind: "refuse",
      reason: "invalid-invite",
    });
    expect(access.check("telegram", { id: "10" }).kind).toBe("pair");
  });

  it("survives a restart: state is plain files under GUPPY_HOME/access", () => {
    const code = control("pairing").createInvite("discord");
    const files = JSON.parse(readFileSync(join(home, "access", "discord", "invites.json"), "utf8"));
    expect(files).toMatchObject([{ code }]);
    expect(control("pairing").redeemInvite("discord", { id: "u" }, code).kind).toBe("allow");
  });
});

describe("hand-edited access files", () => {
  const approvedFile = () => join(home, "access", "telegram", "approved.json");
  const user = (id: string) => ({ id, approvedAt: "2026-01-01T00:00:00.000Z", via: "invite" });
  const errors: string[] = [];
  const logging: Logger = {
    ...silentLogger,
    error: (message) => void errors.push(message),
  };
  const controlLogging = (policy: AccessPolicy) =>
    createAccessControl({
      store: createAccessStore(home),
      settings: () => ({ policy, allowedUsers: [] }),
      logger: logging,
      now: () => clock,
    });
  beforeEach(() => {
    errors.length = 0;
    mkdirSync(join(home, "access", "telegram"), { recursive: true });
  });

  it("may hold comments and trailing commas, like settings.json", () => {
    writeFileSync(
      approvedFile(),
      `// who may talk to the bot\n[\n  ${JSON.stringify(user("1"))},\n  ${JSON.stringify(user("2"))}, // bob\n]\n`,
    );
    expect(control("allowlist").check("telegram", { id: "2" })).toEqual({
      kind: "allow",
      role: "owner",
    });
  });

  it("takes an id written as a number for the same id as a string", () => {
    writeFileSync(approvedFile(), `[{"id": 1001, "approvedAt": "2026-01-01", "via": "invite"}]`);
    expect(control("allowlist").check("telegram", { id: "1001" })).toEqual({
      kind: "allow",
      role: "owner",
    });
  });

  it("reports invalid JSON as one line naming the file, line and column", () => {
    const store = createAccessStore(home);
    writeFileSync(approvedFile(), `[\n  {"id": "1", "via": "invite"}\n  {"id": "2"}\n]\n`);
    expect(() => store.approved("telegram")).toThrow(
      new ConfigError(`${approvedFile()}:3:3 is not valid JSON: expected ',' or ']'.`),
    );
    // Node 20 gives no position for an unexpected token: it is found all the same.
    writeFileSync(approvedFile(), `[\n  {"id": "1", "name": bob}\n]\n`);
    expect(() => store.approved("telegram")).toThrow(
      new ConfigError(
        `${approvedFile()}:2:23 is not valid JSON: expected a value (text must be in double quotes).`,
      ),
    );
    expect(() => store.check("telegram")).toThrow(ConfigError);
  });

  it("keeps the approved users read before when a running edit breaks the file, and logs it once", () => {
    writeFileSync(approvedFile(), JSON.stringify([user("1"), user("2")]));
    const access = controlLogging("allowlist");
    expect(access.check("telegram", { id: "2" })).toEqual({ kind: "allow", role: "owner" });
    // The owner removes user 2 and leaves out a bracket.
    writeFileSync(approvedFile(), `[\n  ${JSON.stringify(user("1"))}\n`);
    expect(access.check("telegram", { id: "1" })).toEqual({ kind: "allow", role: "owner" });
    expect(access.check("telegram", { id: "2" })).toEqual({ kind: "allow", role: "owner" });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`${approvedFile()}:3:1 is not valid JSON`);
    // Fixed: the edit counts.
    writeFileSync(approvedFile(), JSON.stringify([user("1")]));
    expect(access.check("telegram", { id: "2" }).kind).toBe("refuse");
    expect(access.check("telegram", { id: "1" })).toEqual({ kind: "allow", role: "owner" });
    expect(errors).toHaveLength(1);
  });

  it("does not write over a broken approved.json when admitting someone", () => {
    const access = controlLogging("pairing");
    writeFileSync(approvedFile(), JSON.stringify([user("1")]));
    expect(access.check("telegram", { id: "1" })).toEqual({ kind: "allow", role: "owner" });
    const decision = access.check("telegram", { id: "7" });
    if (decision.kind !== "pair") throw new Error("expected a pairing code");
    const broken = `[\n  ${JSON.stringify(user("1"))},\n  {"id": 8 "name": "x"}\n]\n`;
    writeFileSync(approvedFile(), broken);
    expect(() => access.approvePairing("telegram", decision.code)).toThrow(ConfigError);
    expect(readFileSync(approvedFile(), "utf8")).toBe(broken);
  });
});

describe("roles", () => {
  const approvedFile = () => join(home, "access", "telegram", "approved.json");
  const approved = () =>
    JSON.parse(readFileSync(approvedFile(), "utf8")) as Array<Record<string, unknown>>;
  const writeApproved = (entries: unknown[]) => {
    mkdirSync(join(home, "access", "telegram"), { recursive: true });
    writeFileSync(approvedFile(), JSON.stringify(entries));
  };
  const pairCode = (access: ReturnType<typeof control>, id: string): string => {
    const decision = access.check("telegram", { id });
    if (decision.kind !== "pair") throw new Error(`expected a pairing code, got ${decision.kind}`);
    return decision.code;
  };

  it("admits a guest by pairing unless approved as owner, and writes the role down", () => {
    const access = control("pairing");
    access.approvePairing("telegram", pairCode(access, "7"));
    access.approvePairing("telegram", pairCode(access, "8"), "owner");
    expect(access.check("telegram", { id: "7" })).toEqual({ kind: "allow", role: "guest" });
    expect(access.check("telegram", { id: "8" })).toEqual({ kind: "allow", role: "owner" });
    expect(approved()).toMatchObject([
      { id: "7", via: "pairing", role: "guest" },
      { id: "8", via: "pairing", role: "owner" },
    ]);
  });

  it("an invite admits as the role it was made with; one made before roles, as a guest", () => {
    const access = control("pairing");
    const owner = access.createInvite("telegram", "owner");
    const guest = access.createInvite("telegram");
    const invites = JSON.parse(
      readFileSync(join(home, "access", "telegram", "invites.json"), "utf8"),
    );
    expect(invites).toMatchObject([
      { code: owner, role: "owner" },
      { code: guest, role: "guest" },
    ]);
    expect(access.redeemInvite("telegram", { id: "1" }, owner)).toEqual({
      kind: "allow",
      role: "owner",
    });
    expect(access.redeemInvite("telegram", { id: "2" }, guest)).toEqual({
      kind: "allow",
      role: "guest",
    });
    writeFileSync(
      join(home, "access", "telegram", "invites.json"),
      JSON.stringify([{ code: "OLDCODE234", createdAt: "2025-01-01T00:00:00Z" }]),
    );
    expect(access.redeemInvite("telegram", { id: "3" }, "OLDCODE234")).toEqual({
      kind: "allow",
      role: "guest",
    });
    expect(access.check("telegram", { id: "1" })).toEqual({ kind: "allow", role: "owner" });
  });

  it("users admitted before roles existed and allowlisted users are owners; strangers of an open channel are guests", () => {
    writeApproved([
      { id: "1", approvedAt: "2025-01-01", via: "pairing" },
      { id: 2, approvedAt: "2025-01-01", via: "invite" },
      { id: "3", approvedAt: "2025-01-01", via: "pairing", role: "guest" },
    ]);
    for (const policy of ["pairing", "allowlist", "open"] as const) {
      const access = control(policy, ["42"]);
      expect(access.check("telegram", { id: "1" })).toEqual({ kind: "allow", role: "owner" });
      expect(access.check("telegram", { id: "2" })).toEqual({ kind: "allow", role: "owner" });
      expect(access.check("telegram", { id: "3" })).toEqual({ kind: "allow", role: "guest" });
      expect(access.check("telegram", { id: "42" })).toEqual({ kind: "allow", role: "owner" });
    }
    expect(control("open", ["42"]).check("telegram", { id: "99" })).toEqual({
      kind: "allow",
      role: "guest",
    });
    expect(control("disabled", ["42"]).check("telegram", { id: "42" }).kind).toBe("refuse");
  });

  it("says once at start who is an owner and how to make one a guest, then records them", () => {
    writeApproved([
      { id: "1", name: "ann", approvedAt: "2025-01-01", via: "pairing" },
      { id: "3", approvedAt: "2025-01-01", via: "pairing", role: "guest" },
    ]);
    const said: string[] = [];
    control("pairing", ["42"]).announceOwners("telegram", (line) => said.push(line));
    expect(said).toEqual([
      "telegram: users 1 (ann), 42 are owners (admitted before roles existed, or in GUPPY_ALLOWED_USERS); to make one a guest: guppy pairing role telegram <user> guest",
    ]);
    expect(approved()).toMatchObject([
      { id: "1", name: "ann", via: "pairing", role: "owner" },
      { id: "3", via: "pairing", role: "guest" },
      { id: "42", via: "allowlist", role: "owner" },
    ]);
    // The next start is quiet; an id added to the allowlist later is said once in the same way.
    control("pairing", ["42"]).announceOwners("telegram", (line) => said.push(line));
    expect(said).toHaveLength(1);
    control("pairing", ["42", "43"]).announceOwners("telegram", (line) => said.push(line));
    expect(said[1]).toBe(
      "telegram: user 43 is an owner (admitted before roles existed, or in GUPPY_ALLOWED_USERS); to make one a guest: guppy pairing role telegram <user> guest",
    );
    // Nothing to say on a channel no one was admitted to.
    control("pairing").announceOwners("slack", (line) => said.push(line));
    expect(said).toHaveLength(2);
  });

  it("changes a role; an allowlisted user's is recorded and admits no one once out of the list", () => {
    const access = control("pairing");
    access.approvePairing("telegram", pairCode(access, "7"));
    expect(access.setRole("telegram", "7", "owner")).toMatchObject({
      kind: "changed",
      from: "guest",
      user: { id: "7", role: "owner", via: "pairing" },
    });
    expect(access.check("telegram", { id: "7" })).toEqual({ kind: "allow", role: "owner" });
    expect(access.setRole("telegram", "7", "owner")).toMatchObject({ kind: "unchanged" });
    expect(access.setRole("telegram", "8", "guest")).toEqual({ kind: "unknown" });

    const listed = control("allowlist", ["42"]);
    expect(listed.setRole("telegram", "42", "guest")).toMatchObject({
      kind: "changed",
      from: "owner",
    });
    expect(listed.check("telegram", { id: "42" })).toEqual({ kind: "allow", role: "guest" });
    expect(approved()).toContainEqual(
      expect.objectContaining({ id: "42", via: "allowlist", role: "guest" }),
    );
    expect(listed.admittedUsers("telegram")).toEqual([
      { id: "7", role: "owner", via: "pairing" },
      { id: "42", role: "guest", via: "allowlist" },
    ]);
    // Taken out of GUPPY_ALLOWED_USERS: the entry only said which role the list gives.
    const unlisted = control("allowlist");
    expect(unlisted.check("telegram", { id: "42" }).kind).toBe("refuse");
    expect(unlisted.setRole("telegram", "42", "owner")).toEqual({ kind: "unknown" });
    expect(unlisted.admittedUsers("telegram").map((u) => u.id)).toEqual(["7"]);
  });

  it("a broken approved.json keeps the roles read before", () => {
    writeApproved([
      { id: "1", approvedAt: "2025-01-01", via: "pairing", role: "guest" },
      { id: "2", approvedAt: "2025-01-01", via: "pairing", role: "owner" },
    ]);
    const access = control("pairing");
    expect(access.check("telegram", { id: "1" })).toEqual({ kind: "allow", role: "guest" });
    writeFileSync(approvedFile(), `[{"id": "1", "role": "owner"`);
    expect(access.check("telegram", { id: "1" })).toEqual({ kind: "allow", role: "guest" });
    expect(access.check("telegram", { id: "2" })).toEqual({ kind: "allow", role: "owner" });
    expect(() => access.setRole("telegram", "1", "owner")).toThrow(ConfigError);
  });
});
