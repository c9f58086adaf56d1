// The client address the sign-in limits count (docs/security.md#behind-a-proxy): the socket peer,
// unless the peer is a proxy named in VECSYNC_TRUSTED_PROXIES, whose X-Forwarded-For is then read
// from the right.
import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { clientAddress } from "../../src/http/client-ip.ts";
import { createTestApp } from "../harness.ts";
import { listenOnLoopback } from "../domains/auth/helpers.ts";

const proxies = (list: string) => loadConfig({}, { VECSYNC_TRUSTED_PROXIES: list }).trustedProxies;
const xff = (value: string) => new Headers({ "x-forwarded-for": value });

describe("happy", () => {
  test("no trusted proxy: the peer, whatever X-Forwarded-For says", () => {
    expect(clientAddress("203.0.113.7", xff("198.51.100.1"), [])).toBe("203.0.113.7");
    expect(clientAddress("127.0.0.1", xff("198.51.100.1"), proxies("10.0.0.0/8"))).toBe("127.0.0.1");
  });

  test("behind trusted proxies: the rightmost entry that is not one of them", () => {
    const trusted = proxies("10.0.0.0/8, 192.0.2.1");
    expect(clientAddress("10.1.1.1", xff("198.51.100.1"), trusted)).toBe("198.51.100.1");
    // A client's own forged entries sit left of what the proxies appended: never believed.
    expect(clientAddress("10.1.1.1", xff("6.6.6.6, 198.51.100.1, 192.0.2.1"), trusted)).toBe("198.51.100.1");
    expect(clientAddress("10.1.1.1", xff("10.2.2.2, 10.3.3.3"), trusted)).toBe("10.2.2.2");
    expect(clientAddress("10.1.1.1", xff("not-an-address"), trusted)).toBe("10.1.1.1");
    expect(clientAddress("10.1.1.1", new Headers(), trusted)).toBe("10.1.1.1");
  });

  test("IPv6 clients count by their /64; IPv4 over an IPv6 socket as IPv4", () => {
    expect(clientAddress("2001:db8:1:2:aaaa::1", new Headers(), [])).toBe("2001:db8:1:2::/64");
    expect(clientAddress("2001:db8:1:2:bbbb::9", new Headers(), [])).toBe("2001:db8:1:2::/64");
    expect(clientAddress("::ffff:203.0.113.7", new Headers(), [])).toBe("203.0.113.7");
  });
});

describe("errors", () => {
  test("a bad VECSYNC_TRUSTED_PROXIES entry stops start-up, naming it", () => {
    expect(() => proxies("10.0.0.0/8, nonsense")).toThrow('VECSYNC_TRUSTED_PROXIES: "nonsense"');
  });

  test("over a socket: behind a trusted proxy each client has its own sign-in limit; untrusted, one for all", async () => {
    const requests = async (env: Record<string, string>) => {
      await using app = await createTestApp({ env: { VECSYNC_OTP_IP_LIMIT: "2", ...env } });
      await using server = listenOnLoopback(app);
      const otp = (i: number, from: string) =>
        fetch(`${server.url}/v1/auth/otp`, { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": from }, body: JSON.stringify({ email: `p${i}@example.com` }) });
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await otp(i, `198.51.100.${i % 3}`)).status);
      return statuses;
    };
    expect(await requests({ VECSYNC_TRUSTED_PROXIES: "127.0.0.1" })).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await requests({})).toEqual([200, 200, 429, 429, 429, 429]);
  });
});
