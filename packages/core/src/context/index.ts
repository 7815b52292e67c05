// @guppy/core/context: the token counter the context engine budgets with.
export { createTokenCounter, type TokenCounter } from "./token-counter.js";
