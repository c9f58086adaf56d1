import { describe, expect, test } from "bun:test";
import { AppError, DriverError } from "../../src/shared/errors.ts";
import { checkHostSpelling, hostPolicy, hostSpellingProblem, isValidHost, parseHostRule, vetHost, type HostPolicy } from "../../src/shared/host-guard.ts";
import { cidrContains, embeddedIPv4, embeddedIPv4s, formatAddress, parseAddress, parseCidr } from "../../src/shared/ip.ts";
import { fakeDns } from "../fakes/dns.ts";

const canonical = (text: string) => {
  const a = parseAddress(text);
  return a ? formatAddress(a) : null;
};

const policy = (deny: string[] = [], allow: string[] = []): HostPolicy => hostPolicy({ denyHosts: deny, allowHosts: allow });
const normalised = (host: string) => host.toLowerCase().replace(/\.$/, "");

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe("validation_error");
  return err as AppError;
}

describe("happy", () => {
  test.each([
    ["127.0.0.1", "127.0.0.1"],
    ["127.1", "127.0.0.1"],
    ["127.0.1", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0x7f000001", "127.0.0.1"],
    ["0177.0.0.1", "127.0.0.1"],
    ["0x7f.1", "127.0.0.1"],
    ["169.254.43518", "169.254.169.254"],
    ["0251.0376.0251.0376", "169.254.169.254"],
    ["2852039166", "169.254.169.254"],
    ["::1", "::1"],
    ["0:0:0:0:0:0:0:1", "::1"],
    ["::ffff:127.0.0.1", "::ffff:7f00:1"],
    ["FD00:EC2:0:0:0:0:0:254", "fd00:ec2::254"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
  ])("%s normalises to %s", (text, expected) => {
    expect(canonical(text)).toBe(expected);
  });

  test.each(["db.example.com", "08.1.1.1", "256.1.1.1", "1.2.3.4.5", "0x", "127.0.0.1.", "4294967296"])("%s is not an address", (text) => {
    expect(canonical(text)).toBeNull();
  });

  test("IPv4 inside IPv6: mapped, compatible and NAT64 forms", () => {
    for (const text of ["::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "::169.254.169.254", "64:ff9b::169.254.169.254"]) {
      expect(formatAddress(embeddedIPv4(parseAddress(text)!)!)).toBe("169.254.169.254");
    }
    expect(embeddedIPv4(parseAddress("::1")!)).toBeNull();
    expect(embeddedIPv4(parseAddress("2001:db8::1")!)).toBeNull();
  });

  test.each([
    ["::ffff:169.254.169.254", ["169.254.169.254"]],
    ["64:ff9b::a9fe:a9fe", ["169.254.169.254"]],
    ["2002:a9fe:a9fe::1", ["169.254.169.254"]], // 6to4: the IPv4 address follows the 2002: prefix
    ["2002:a9fe:a9fe:ab:cd::", ["169.254.169.254"]],
    // Teredo: server 192.0.2.1 in bits 32-63; client 169.254.169.254 inverted in the last 32 bits
    ["2001:0:c000:201::5601:5601", ["192.0.2.1", "169.254.169.254"]],
    ["::ffff:0:a9fe:a9fe", ["169.254.169.254"]], // IPv4-translated (SIIT)
    ["2001:db8::5efe:a9fe:a9fe", ["169.254.169.254"]], // ISATAP interface id
    ["2001:db8::200:5efe:a9fe:a9fe", ["169.254.169.254"]],
    ["2001:db8::a9fe:a9fe", []],
    ["fe80::1", []],
  ])("%s embeds %j", (text, expected) => {
    expect(embeddedIPv4s(parseAddress(text)!).map(formatAddress)).toEqual(expected);
  });

  test("CIDR matching at bit boundaries, per family", () => {
    const within = (cidr: string, address: string) => cidrContains(parseCidr(cidr)!, parseAddress(address)!);
    expect(within("169.254.0.0/16", "169.254.255.255")).toBe(true);
    expect(within("169.254.0.0/16", "169.255.0.0")).toBe(false);
    expect(within("10.0.0.0/9", "10.127.1.1")).toBe(true);
    expect(within("10.0.0.0/9", "10.128.0.0")).toBe(false);
    expect(within("fe80::/10", "febf::1")).toBe(true);
    expect(within("fe80::/10", "fec0::1")).toBe(false);
    expect(within("0.0.0.0/0", "8.8.8.8")).toBe(true);
    expect(within("0.0.0.0/0", "::1")).toBe(false);
    expect(parseCidr("10.0.0.0/33")).toBeNull();
    expect(parseCidr("fd00::/129")).toBeNull();
  });

  test("loopback and private addresses are allowed by default; the address is what the driver gets", async () => {
    expect(await vetHost("127.0.0.1", policy())).toEqual({ address: "127.0.0.1" });
    expect(await vetHost("127.1", policy())).toEqual({ address: "127.0.0.1" });
    expect(await vetHost("[::1]", policy())).toEqual({ address: "::1" });
    expect(await vetHost("::ffff:10.1.2.3", policy())).toEqual({ address: "10.1.2.3" });
    expect(await vetHost("2002:a00:1::1", policy())).toEqual({ address: "2002:a00:1::1" }); // 6to4 of 10.0.0.1
    expect(await vetHost("db.internal.test", policy(), fakeDns({ "db.internal.test": ["10.0.0.5"] }))).toEqual({ address: "10.0.0.5", servername: "db.internal.test" });
  });

  test("a name with both families is dialled over IPv4", async () => {
    const dns = fakeDns({ "dual.test": ["2001:db8::5", "10.0.0.5"], "mapped.test": ["::ffff:10.0.0.6"], "v6.test": ["2001:db8::7"] });
    expect(await vetHost("dual.test", policy(), dns)).toEqual({ address: "10.0.0.5", servername: "dual.test" });
    expect(await vetHost("mapped.test", policy(), dns)).toEqual({ address: "10.0.0.6", servername: "mapped.test" });
    expect(await vetHost("v6.test", policy(), dns)).toEqual({ address: "2001:db8::7", servername: "v6.test" });
  });

  test("localhost resolves through the system resolver", async () => {
    const vetted = await vetHost("localhost", policy());
    expect(["127.0.0.1", "::1"]).toContain(vetted.address);
    expect(vetted.servername).toBe("localhost");
  });

  test("VECSYNC_ALLOW_HOSTS lifts the default refusal, by CIDR or by name", async () => {
    expect(await vetHost("169.254.10.10", policy([], ["169.254.0.0/16"]))).toEqual({ address: "169.254.10.10" });
    const dns = fakeDns({ "link.test": ["169.254.3.3"] });
    expect(await vetHost("link.test", policy([], ["link.test"]), dns)).toEqual({ address: "169.254.3.3", servername: "link.test" });
    expect(await vetHost("Link.Test.", policy([], ["*.test"]), dns)).toEqual({ address: "169.254.3.3", servername: "link.test" });
  });
});

describe("errors", () => {
  test.each(["169.254.169.254", "169.254.43518", "2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "[2002:a9fe:a9fe::1]", "2002:a9fe:1234::", "2001:0:a9fe:a9fe::1", "2001:0:c000:201::5601:5601", "::a9fe:a9fe", "2002:6464:64c8::", "::ffff:0:a9fe:a9fe", "2001:db8::5efe:a9fe:a9fe", "fe80::1", "[fe80::1%eth0]", "fd00:ec2::254", "100.100.100.200"])(
    "%s is refused (400) without any DNS",
    async (host) => {
      const err = await refusal(vetHost(host, policy(), fakeDns({})));
      expect(err.details).toEqual([{ path: "credentials.host", message: expect.stringContaining("link-local and cloud-metadata") }]);
      expect(() => checkHostSpelling(host, policy())).toThrow(AppError);
    },
  );

  test.each(["metadata", "metadata.", "metadata.google.internal", "Metadata.Google.Internal."])("the metadata name %s is refused by name, whatever DNS says", async (host) => {
    const dns = fakeDns({ metadata: ["10.0.0.1"], "metadata.google.internal": ["10.0.0.1"] });
    const err = await refusal(vetHost(host, policy(), dns));
    expect(err.details).toEqual([{ path: "credentials.host", message: expect.stringContaining("link-local and cloud-metadata") }]);
    expect(() => checkHostSpelling(host, policy())).toThrow(AppError);
    expect(hostSpellingProblem(host, policy())).toContain("cloud-metadata");
    // The allow list lifts it by name, as it lifts a refused address.
    expect(await vetHost(host, policy([], ["metadata", "metadata.google.internal"]), dns)).toEqual({ address: "10.0.0.1", servername: normalised(host) });
  });

  test("a refusal is reported at the path of the field that carried the host", async () => {
    const err = await refusal(vetHost("rebind.test", policy(), fakeDns({ "rebind.test": ["169.254.169.254"] }), "base_url"));
    expect(err.details).toEqual([{ path: "base_url", message: '"rebind.test" resolves to 169.254.169.254; link-local and cloud-metadata addresses are refused (VECSYNC_ALLOW_HOSTS can allow them)' }]);
    const denied = (() => {
      try {
        checkHostSpelling("10.1.2.3", policy(["10.0.0.0/8"]), "base_url");
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(denied?.details).toEqual([{ path: "base_url", message: expect.stringContaining("deny list") }]);
    expect(hostSpellingProblem("db.example.com", policy())).toBeNull();
  });

  test("a name is checked after resolution: every address must pass", async () => {
    const dns = fakeDns({ "meta.test": ["169.254.169.254"], "mixed.test": ["10.0.0.1", "169.254.169.254"], "mapped.test": ["::ffff:169.254.169.254"] });
    for (const name of ["meta.test", "mixed.test", "mapped.test"]) await refusal(vetHost(name, policy(), dns));
    // The spelling check at create time leaves names to the connect-time check.
    expect(() => checkHostSpelling("meta.test", policy())).not.toThrow();
  });

  test("VECSYNC_DENY_HOSTS always refuses, even what the allow list names", async () => {
    const deny = policy(["10.0.0.0/8", "*.corp.test", "db.blocked.test"], ["10.0.0.0/8", "db.blocked.test"]);
    await refusal(vetHost("10.1.2.3", deny));
    await refusal(vetHost("::ffff:10.1.2.3", deny));
    await refusal(vetHost("x.corp.test", deny, fakeDns({ "x.corp.test": ["192.168.1.1"] })));
    await refusal(vetHost("db.blocked.test", deny, fakeDns({ "db.blocked.test": ["192.168.1.1"] })));
    await refusal(vetHost("ok.test", deny, fakeDns({ "ok.test": ["10.9.9.9"] })));
    expect(() => checkHostSpelling("x.corp.test", deny)).toThrow(AppError);
    expect(await vetHost("127.0.0.1", deny)).toEqual({ address: "127.0.0.1" });
  });

  test("a name that does not resolve is a DriverError, not a refusal", async () => {
    const err = await vetHost("nowhere.test", policy(), fakeDns({})).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DriverError);
    expect((err as Error).message).toContain("nowhere.test");
  });

  test("hosts that are not a name or an address are invalid (socket paths, URLs, host:port)", () => {
    for (const host of ["/var/run/postgresql", "db.example.com:5432", "postgres://db", "user@db", "db example", "", "-db"]) expect(isValidHost(host)).toBe(false);
    for (const host of ["db.example.com", "my_db", "10.0.0.1", "[::1]", "fe80::1%eth0", "localhost"]) expect(isValidHost(host)).toBe(true);
  });

  test("bad deny/allow entries are refused when the policy is built, naming the variable", () => {
    for (const entry of ["10.0.0.0/33", "not a host", "1.2.3.4/8/1", "http://x"]) expect(() => parseHostRule(entry)).toThrow();
    expect(() => hostPolicy({ denyHosts: ["10.0.0.0/33"], allowHosts: [] })).toThrow("VECSYNC_DENY_HOSTS");
  });
});
