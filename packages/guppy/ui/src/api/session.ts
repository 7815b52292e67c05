import { del, get, post } from "./client.js";

/** GET /v1/session: signed in? `token_hint` (where the token is stored) only on this machine. */
export interface SessionState {
  authenticated: boolean;
  token_hint?: string;
}

export const sessionState = () => get<SessionState>("/v1/session");
/** POST /v1/session: the token becomes an HttpOnly cookie; the page keeps no copy. */
export const signIn = (token: string) => post<SessionState>("/v1/session", { token });
export const signOut = () => del<SessionState>("/v1/session");

/** The marker cookie the gateway sets beside the session (readable: it holds no secret). */
export function seemsSignedIn(): boolean {
  return document.cookie.split("; ").includes("guppy_signed_in=1");
}
