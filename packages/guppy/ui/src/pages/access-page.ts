import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import {
  type AccessJson,
  type AdmittedJson,
  approvePairing,
  channelAccess,
  createInvite,
  denyPairing,
  type PendingJson,
  ROLES,
  type Role,
  revokeInvite,
  revokeUser,
  setRole,
} from "../api/access.js";
import { errorText } from "../api/client.js";
import { gatewayStatus } from "../api/status.js";
import "./access-page.css";
import { localTime } from "../format.js";
import { usePollWhileVisible } from "../use-poll.js";

/** One chat channel's access as the page got it: its lists, or why they could not be read. */
type ChannelAnswer = { channel: string; access: AccessJson } | { channel: string; error: string };

/**
 * The chat channels this gateway runs (GET /v1/status, the HTTP API's own excepted: its callers
 * hold the token) and each one's access (GET /v1/access/{channel}).
 */
async function loadAccess(): Promise<ChannelAnswer[]> {
  const status = await gatewayStatus();
  const names = status.channels
    .filter((c) => c.state === "running" && c.name !== "http")
    .map((c) => c.name);
  return Promise.all(
    names.map((channel) =>
      channelAccess(channel).then(
        (access): ChannelAnswer => ({ channel, access }),
        (e): ChannelAnswer => ({ channel, error: errorText(e) }),
      ),
    ),
  );
}

/**
 * Who may talk to the agent (issue 38 item 3), per running chat channel: pending pairing requests
 * to approve (as guest or owner) or deny, admitted users with their role and a revoke, and
 * invites to create, list and revoke. Refreshed every 5 s while visible, so a stranger's new
 * request shows up by itself.
 */
export function AccessPage() {
  const { data, error, refresh } = usePollWhileVisible(loadAccess);
  return html`
    <section aria-labelledby="access-title" class="access-page">
      <h1 id="access-title">Access</h1>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      ${
        data === undefined
          ? error
            ? null
            : html`<p class="muted" aria-busy="true">Loading…</p>`
          : data.length === 0
            ? html`<p class="muted">
                No chat channel is running: Telegram, Slack and Discord start with guppy serve once
                their bot token is set (guppy setup). The HTTP API needs no access list: its token
                is the key.
              </p>`
            : data.map(
                (answer) =>
                  html`<${ChannelAccess} key=${answer.channel} answer=${answer} refresh=${refresh} />`,
              )
      }
    </section>
  `;
}

const who = (user: { user: string; name?: string | null }) =>
  user.name ? `${user.name} (${user.user})` : user.user;

function ChannelAccess({
  answer,
  refresh,
}: {
  answer: ChannelAnswer;
  refresh: () => Promise<void>;
}) {
  const { channel } = answer;
  const [failure, setFailure] = useState<string | undefined>();
  const [busy, setBusy] = useState<string | undefined>();
  const [confirming, setConfirming] = useState<string | undefined>();
  const [inviteRole, setInviteRole] = useState<Role>("guest");
  const [created, setCreated] = useState<{ code: string; role: Role } | undefined>();
  const titleId = `access-${channel}`;

  /** Runs one change, then reloads the lists; its failure is one line under the title. */
  const act = async (key: string, change: () => Promise<unknown>) => {
    setBusy(key);
    try {
      await change();
      setFailure(undefined);
    } catch (e) {
      setFailure(errorText(e));
    } finally {
      setBusy(undefined);
    }
    await refresh();
  };

  return html`
    <section class="access-channel" aria-labelledby=${titleId}>
      <h2 id=${titleId}>
        ${channel}
        ${"access" in answer ? html` <span class="muted policy">policy: ${answer.access.policy}</span>` : null}
      </h2>
      ${"error" in answer ? html`<p class="error" role="alert">${answer.error}</p>` : null}
      ${failure ? html`<p class="error" role="alert">${failure}</p>` : null}
      ${
        "access" in answer
          ? html`
              <${Pending}
                channel=${channel}
                pending=${answer.access.pending}
                busy=${busy}
                act=${act}
              />
              <${Users}
                channel=${channel}
                users=${answer.access.users}
                busy=${busy}
                act=${act}
                confirming=${confirming}
                setConfirming=${setConfirming}
              />
              <h3 id=${`${titleId}-invites`}>Invites</h3>
              <form
                class="access-invite-form"
                onSubmit=${(e: Event) => {
                  e.preventDefault();
                  void act("invite", async () => {
                    setCreated(await createInvite(channel, inviteRole));
                  });
                }}
              >
                <label for=${`${titleId}-invite-role`}>Role</label>
                <select
                  id=${`${titleId}-invite-role`}
                  value=${inviteRole}
                  onChange=${(e: Event) => setInviteRole((e.target as HTMLSelectElement).value as Role)}
                >
                  ${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}
                </select>
                <button type="submit" disabled=${busy !== undefined}>Create invite</button>
              </form>
              ${
                created
                  ? html`<p class="access-created" role="status">
                      New ${created.role} invite: <code>${created.code}</code> — the person sends
                      <code>/start ${created.code}</code> to the bot.
                    </p>`
                  : null
              }
              <${Invites}
                channel=${channel}
                invites=${answer.access.invites}
                labelledBy=${`${titleId}-invites`}
                busy=${busy}
                act=${act}
              />
            `
          : null
      }
    </section>
  `;
}

type Act = (key: string, change: () => Promise<unknown>) => Promise<void>;

function Pending({
  channel,
  pending,
  busy,
  act,
}: {
  channel: string;
  pending: PendingJson[];
  busy: string | undefined;
  act: Act;
}) {
  const id = `access-${channel}-pending`;
  return html`
    <h3 id=${id}>Pending pairing requests</h3>
    ${
      pending.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<div class="access-scroll">
            <table role="table" aria-labelledby=${id}>
              <thead role="rowgroup">
                <tr role="row">
                  <th role="columnheader" scope="col">User</th>
                  <th role="columnheader" scope="col">Code</th>
                  <th role="columnheader" scope="col">Requested</th>
                  <th role="columnheader" scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody role="rowgroup">
                ${pending.map(
                  (p) => html`<tr role="row" key=${p.code}>
                    <td role="cell" data-label="User">${who(p)}</td>
                    <td role="cell" data-label="Code"><code>${p.code}</code></td>
                    <td role="cell" data-label="Requested">${localTime(p.requested)}</td>
                    <td role="cell"><div class="access-actions">
                      ${ROLES.map(
                        (role) => html`<button
                          type="button"
                          class=${role === "owner" ? "secondary" : ""}
                          disabled=${busy !== undefined}
                          aria-label=${`Approve as ${role}: ${who(p)}`}
                          onClick=${() => act(`approve-${p.code}`, () => approvePairing(channel, p.code, role))}
                        >
                          Approve as ${role}
                        </button>`,
                      )}
                      <button
                        type="button"
                        class="danger"
                        disabled=${busy !== undefined}
                        aria-label=${`Deny: ${who(p)}`}
                        onClick=${() => act(`deny-${p.code}`, () => denyPairing(channel, p.code))}
                      >
                        Deny
                      </button>
                    </div></td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  `;
}

function Users({
  channel,
  users,
  busy,
  act,
  confirming,
  setConfirming,
}: {
  channel: string;
  users: AdmittedJson[];
  busy: string | undefined;
  act: Act;
  confirming: string | undefined;
  setConfirming: (user: string | undefined) => void;
}) {
  const id = `access-${channel}-users`;
  return html`
    <h3 id=${id}>Admitted users</h3>
    ${
      users.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<div class="access-scroll">
            <table role="table" aria-labelledby=${id}>
              <thead role="rowgroup">
                <tr role="row">
                  <th role="columnheader" scope="col">User</th>
                  <th role="columnheader" scope="col">Role</th>
                  <th role="columnheader" scope="col">Admitted by</th>
                  <th role="columnheader" scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody role="rowgroup">
                ${users.map(
                  (u) => html`<tr role="row" key=${u.user}>
                    <td role="cell" data-label="User">${who(u)}</td>
                    <td role="cell" data-label="Role">
                      <select
                        aria-label=${`Role of ${who(u)}`}
                        value=${u.role}
                        disabled=${busy !== undefined}
                        onChange=${(e: Event) => {
                          const role = (e.target as HTMLSelectElement).value as Role;
                          void act(`role-${u.user}`, () => setRole(channel, u.user, role));
                        }}
                      >
                        ${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}
                      </select>
                    </td>
                    <td role="cell" data-label="Admitted by">${u.source === "allowed_users" ? "GUPPY_ALLOWED_USERS" : "approval"}</td>
                    <td role="cell"><div class="access-actions">
                      ${
                        u.source === "allowed_users"
                          ? html`<span class="muted small">only the setting can revoke</span>`
                          : confirming === u.user
                            ? html`<${ConfirmRevoke}
                                label=${who(u)}
                                disabled=${busy !== undefined}
                                onConfirm=${() => {
                                  setConfirming(undefined);
                                  void act(`revoke-${u.user}`, () => revokeUser(channel, u.user));
                                }}
                                onCancel=${() => {
                                  setConfirming(undefined);
                                  focusButton(`Revoke: ${who(u)}`);
                                }}
                              />`
                            : html`<button
                                type="button"
                                class="secondary"
                                disabled=${busy !== undefined}
                                aria-label=${`Revoke: ${who(u)}`}
                                onClick=${() => setConfirming(u.user)}
                              >
                                Revoke
                              </button>`
                      }
                    </div></td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  `;
}

/** Puts the focus back on the button named `label` once it is drawn again (after a Cancel). */
function focusButton(label: string): void {
  requestAnimationFrame(() =>
    document.querySelector<HTMLButtonElement>(`button[aria-label="${CSS.escape(label)}"]`)?.focus(),
  );
}

/** The second step of a revoke: says what it does; the confirm button takes the focus. */
function ConfirmRevoke({
  label,
  disabled,
  onConfirm,
  onCancel,
}: {
  label: string;
  disabled: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => confirm.current?.focus(), []);
  return html`<span class="access-confirm" role="group" aria-label=${`Confirm revoking ${label}`}>
    <span>Revoke ${label}? Their next message is refused.</span>
    <button
      type="button"
      class="danger"
      ref=${confirm}
      disabled=${disabled}
      onClick=${onConfirm}
      onKeyDown=${(e: KeyboardEvent) => e.key === "Escape" && onCancel()}
    >
      Yes, revoke
    </button>
    <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
  </span>`;
}

function Invites({
  channel,
  invites,
  labelledBy,
  busy,
  act,
}: {
  channel: string;
  invites: AccessJson["invites"];
  labelledBy: string;
  busy: string | undefined;
  act: Act;
}) {
  if (invites.length === 0) return html`<p class="muted">No unused invites.</p>`;
  return html`<div class="access-scroll">
    <table role="table" aria-labelledby=${labelledBy}>
      <thead role="rowgroup">
        <tr role="row">
          <th role="columnheader" scope="col">Code</th>
          <th role="columnheader" scope="col">Role</th>
          <th role="columnheader" scope="col">Created</th>
          <th role="columnheader" scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody role="rowgroup">
        ${invites.map(
          (i) => html`<tr role="row" key=${i.code}>
            <td role="cell" data-label="Code"><code>${i.code}</code></td>
            <td role="cell" data-label="Role">${i.role}</td>
            <td role="cell" data-label="Created">${localTime(i.created)}</td>
            <td role="cell"><div class="access-actions">
              <button
                type="button"
                class="secondary"
                disabled=${busy !== undefined}
                aria-label=${`Revoke invite ${i.code}`}
                onClick=${() => act(`invite-${i.code}`, () => revokeInvite(channel, i.code))}
              >
                Revoke
              </button>
            </div></td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
