import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { blockedRange, checkUrl, FetchRefused } from "../../src/web/ssrf-guard.js";

const closed = { allowPrivate: false, allowHosts: [] as string[] };

/** A resolver that knows only the names given (tests must not depend on outside DNS). */
function resolver(names: Record<string, string[]>) {
  return async (host: string): Promise<LookupAddress[]> => {
    const addresses = names[host];
    if (!addresses) throw Object.assign(new Error(`unknown ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

async function refusal(url: string, policy = closed): Promise<string> {
  try {
    await checkUrl(new URL(url), policy);
  } catch (error) {
    expect(error).toBeInstanceOf(FetchRefused);
    return (error as Error).message;
  }
  throw new Error(`${url} was not refused`);
}

describe("blockedRange", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.1.2.3", "private (10.0.0.0/8)"],
    ["172.16.0.1", "private (172.16.0.0/12)"],
    ["172.31.255.255", "private (172.16.0.0/12)"],
    ["192.168.1.1", "private (192.168.0.0/16)"],
    ["169.254.169.254", "cloud-metadata"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:a9fe:a9fe", "cloud-metadata"],
    ["::ffff:10.0.0.1", "private"],
    ["64:ff9b::7f00:1", "loopback"],
    ["2002:7f00:1::", "loopback"],
    ["::7f00:1", "IPv4-compatible"],
  ])("refuses %s (%s)", (address, kind) => {
    expect(blockedRange(address)).toContain(kind);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
  ])("lets the public %s through", (address) => {
    expect(blockedRange(address)).toBeUndefined();
  });
});

describe("checkUrl", () => {
  it.each([
    ["http://localhost:8080/", "127.0.0.1|::1"],
    ["http://127.1/", "127.0.0.1"],
    ["http://0x7f000001/", "127.0.0.1"],
    ["http://2130706433/", "127.0.0.1"],
    ["http://0177.0.0.1/", "127.0.0.1"],
    ["http://[::1]/", "::1"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"],
    ["http://0.0.0.0/", "0.0.0.0"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
    ["https://10.0.0.1/", "10.0.0.1"],
    ["http://[fe80::1]/", "fe80::1"],
    ["http://100.64.1.1/", "100.64.1.1"],
  ])("refuses %s, naming the address and the settings", async (url, address) => {
    const message = await refusal(url);
    expect(message).toMatch(new RegExp(address.replaceAll(".", "\\.")));
    expect(message).toContain("GUPPY_FETCH_ALLOW_PRIVATE=true");
    expect(message).toContain("GUPPY_FETCH_ALLOW_HOSTS");
    expect(message.split("\n")).toHaveLength(1);
  });

  it("refuses a name that resolves to a private address, naming both", async () => {
    const policy = {
      ...closed,
      resolve: resolver({ "metadata.evil.test": ["93.184.216.34", "169.254.169.254"] }),
    };
    const message = await refusal("http://metadata.evil.test/", policy);
    expect(message).toContain("metadata.evil.test (which resolves to 169.254.169.254)");
    expect(message).toContain("cloud-metadata");
  });

  it("passes a name that resolves to public addresses only, with the addresses to connect to", async () => {
    const policy = { ...closed, resolve: resolver({ "example.test": ["93.184.216.34"] }) };
    const target = await checkUrl(new URL("https://example.test/a"), policy);
    expect(target.host).toBe("example.test");
    expect(target.addresses).toEqual([{ address: "93.184.216.34", family: 4 }]);
  });

  it.each([
    "file:///etc/passwd",
    "ftp://example.com/",
    "gopher://127.0.0.1/",
    "data:text/plain,hi",
  ])("refuses the scheme of %s", async (url) => {
    expect(await refusal(url, { allowPrivate: true, allowHosts: [] })).toMatch(
      /http and https URLs only, not (file|ftp|gopher|data):/,
    );
  });

  it("allows private addresses with fetchAllowPrivate, and a host only as written with fetchAllowHosts", async () => {
    await expect(
      checkUrl(new URL("http://127.0.0.1/"), { allowPrivate: true, allowHosts: [] }),
    ).resolves.toMatchObject({ host: "127.0.0.1" });
    const hosts = { allowPrivate: false, allowHosts: ["LocalHost", "[::1]"] };
    await expect(checkUrl(new URL("http://localhost:1/"), hosts)).resolves.toMatchObject({
      host: "localhost",
    });
    await expect(checkUrl(new URL("http://[::1]:1/"), hosts)).resolves.toMatchObject({
      host: "::1",
    });
    // localhost resolves to 127.0.0.1, but the host as written is what the list names.
    expect(await refusal("http://127.0.0.1/", hosts)).toContain('add "127.0.0.1"');
  });

  it("says so when a name does not resolve", async () => {
    const policy = { ...closed, resolve: resolver({}) };
    expect(await refusal("http://nowhere.test/", policy)).toBe(
      "read_url could not resolve nowhere.test (ENOTFOUND): check the URL's host name.",
    );
  });
});
