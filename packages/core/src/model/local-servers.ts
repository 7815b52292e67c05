/** Local OpenAI-compatible servers guppy looks for when no model is configured. */
export const localServers = [
  { provider: "ollama", name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1" },
  { provider: "lmstudio", name: "LM Studio", baseUrl: "http://127.0.0.1:1234/v1" },
] as const;

export interface DiscoveredModel {
  provider: string;
  baseUrl: string;
  modelId: string;
}

/** Asks each local server for its models (short timeout); the first that answers with one wins. */
export async function discoverLocalModel(
  servers: ReadonlyArray<{ provider: string; baseUrl: string }> = localServers,
  timeoutMs = 400,
): Promise<DiscoveredModel | undefined> {
  const probes = servers.map(async (server) => {
    const response = await fetch(`${server.baseUrl}/models`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new Error(String(response.status));
    const body = (await response.json()) as { data?: Array<{ id?: unknown }> };
    const id = body.data?.find((m) => typeof m.id === "string")?.id;
    if (typeof id !== "string") throw new Error("no models");
    return { provider: server.provider, baseUrl: server.baseUrl, modelId: id };
  });
  const results = await Promise.allSettled(probes);
  for (const r of results) if (r.status === "fulfilled") return r.value;
  return undefined;
}
