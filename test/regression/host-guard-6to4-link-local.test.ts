// Issue 12: the 6to4 form of a link-local address (2002:a9fe:a9fe::1 embeds 169.254.169.254) was
// accepted as a connection host, although 169.254.0.0/16 itself is refused (docs/api.md#host-guard).
import { expect, test } from "bun:test";
import { checkHostSpelling, hostPolicy } from "../../src/shared/host-guard.ts";
import { AppError } from "../../src/shared/errors.ts";

const policy = hostPolicy({ denyHosts: [], allowHosts: [] });

test.each(["2002:a9fe:a9fe::1", "2002:a9fe:0101::", "2001:0:a9fe:a9fe::1", "2001:0:c000:201::5601:5601"])(
  "%s, an IPv6 spelling of a link-local IPv4 address, is refused",
  (host) => {
    expect(() => checkHostSpelling(host, policy)).toThrow(AppError);
  },
);
