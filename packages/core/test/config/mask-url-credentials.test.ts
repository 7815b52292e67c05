import { describe, expect, it } from "vitest";
import { maskUrlCredentials } from "../../src/config/mask-url-credentials.js";

describe("maskUrlCredentials", () => {
  it.each([
    ["https://bob:hunter2secretpass@proxy.example/v1", "https://bob:****@proxy.example/v1"],
    ["http://ghp_tokentokentoken@host:8080/x?y=1", "http://****@host:8080/x?y=1"],
    ["http://bob:p@ss:w@rd@host/", "http://bob:****@host/"],
    ["http://bob:@host", "http://bob:****@host"],
    [
      'cannot reach "http://a:b@one.example" or https://c:d@two.example:1/p#f',
      'cannot reach "http://a:****@one.example" or https://c:****@two.example:1/p#f',
    ],
    ["ftp://bob:hunter2@x/v1", "ftp://bob:****@x/v1"],
  ])("%s", (text, masked) => {
    expect(maskUrlCredentials(text)).toBe(masked);
  });

  it.each([
    "http://127.0.0.1:11434/v1",
    "https://proxy.example/v1?user=a@b",
    "mailto:bob@example.com",
    "bob@example.com",
    "https://proxy.example/people/@bob",
  ])("leaves %s as it is", (text) => {
    expect(maskUrlCredentials(text)).toBe(text);
  });
});
