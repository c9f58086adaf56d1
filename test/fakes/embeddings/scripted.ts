// An upstream on a real port that answers what the test says — a redirect, an error page, a
// Retry-After — where the fake providers (server.ts) speak only well-behaved wire formats. Every
// request is recorded with the Host header it arrived with.
export type ScriptedRequest = { method: string; path: string; host: string | null };

export type ScriptedUpstream = {
  /** Base URL with a version path, as a provider's base_url. */
  url: string;
  port: number;
  requests: ScriptedRequest[];
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
};

/** `answer` is called with the request's index (0 for the first) and the request itself. */
export function startScriptedUpstream(answer: (n: number, req: Request) => Response | Promise<Response>): ScriptedUpstream {
  const requests: ScriptedRequest[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const n = requests.length;
      requests.push({ method: req.method, path: new URL(req.url).pathname, host: req.headers.get("host") });
      await req.arrayBuffer();
      return answer(n, req);
    },
  });
  const stop = () => server.stop(true);
  return { url: `http://127.0.0.1:${server.port}/v1`, port: server.port!, requests, stop, [Symbol.asyncDispose]: stop };
}
