import { html } from "htm/preact";
import { render } from "preact";
import { seemsSignedIn } from "./api/session.js";
import { prefetchChat } from "./api/threads.js";
import { App } from "./app.js";
import { parseRoute } from "./router.js";
import "./style.css";

// Signed in and opening the chat: its data is asked for while its code loads.
const route = parseRoute(location.hash);
if (seemsSignedIn() && route.page === "chat") prefetchChat(route.param);

const root = document.getElementById("app");
if (root) render(html`<${App} />`, root);
