// @guppy/core/prompt: the system prompt and the files it is built from.
export { buildSystemPrompt, type SystemPromptInput } from "./build-system-prompt.js";
export { loadPromptSources, type PromptSources } from "./prompt-sources.js";
