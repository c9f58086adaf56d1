// The benches' small REST client: no imports, so a prober worker (prober-worker.ts) starts in a few
// milliseconds. Importing it from pipeline-service.ts loaded the whole service into each worker:
// ~2 CPU seconds a worker, spent just as a phase began, on the cores the service was measured on.
export class Api {
  constructor(readonly url: string, private readonly headers: Record<string, string> = {}) {}

  withHeaders(headers: Record<string, string>): Api {
    return new Api(this.url, { ...this.headers, ...headers });
  }

  /** URL and headers, to rebuild this Api in a worker (`new Api(url, headers)`). */
  get credentials(): { url: string; headers: Record<string, string> } {
    return { url: this.url, headers: { ...this.headers } };
  }

  /** The same credentials against a restarted service (a new port). */
  at(url: string): Api {
    return new Api(url, this.headers);
  }

  /** Answers the JSON body; throws with the body on any status outside `ok`. */
  async call<T = any>(method: string, path: string, body?: unknown, ok: number[] = [200, 201, 204]): Promise<T> {
    const init: RequestInit = { method, headers: { ...this.headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    const res = await fetch(`${this.url}${path}`, init);
    const text = await res.text();
    if (!ok.includes(res.status)) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : null) as T;
  }
}
