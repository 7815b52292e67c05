import { type FauxProviderRegistration, registerFauxProvider } from "@mariozechner/pi-ai";
import { afterEach, beforeEach } from "vitest";
import type { ResolvedModel } from "../../src/model/resolve-model.js";
import { tempHome } from "./temp-home.js";

/**
 * A fresh home and a faux model (`faux/faux-1`: 100,000-token window, 1,000-token replies) for
 * each test of the calling `describe`, both removed after it: what a thread runner's tests share.
 */
export function useFauxHome(): {
  readonly t: ReturnType<typeof tempHome>;
  readonly faux: FauxProviderRegistration;
  /** The faux model as resolveModel would give it. */
  resolved(): ResolvedModel;
} {
  let t: ReturnType<typeof tempHome> | undefined;
  let faux: FauxProviderRegistration | undefined;
  beforeEach(() => {
    t = tempHome();
    faux = registerFauxProvider({
      models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 1000 }],
    });
  });
  afterEach(() => {
    faux?.unregister();
    t?.cleanup();
  });
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("useFauxHome: used outside a test");
    return value;
  };
  return {
    get t() {
      return need(t);
    },
    get faux() {
      return need(faux);
    },
    resolved: () => ({
      ref: "faux/faux-1",
      model: need(faux).getModel(),
      apiKey: "faux",
      maxTokens: 1000,
      custom: false,
    }),
  };
}
