export * from "./active-hours.js";
export * from "./create-heartbeat.js";
export * from "./heartbeat-file.js";
export * from "./last-channel.js";
export * from "./local-time.js";
