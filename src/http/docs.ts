import scalarBundle from "@scalar/api-reference/browser/standalone.js" with { type: "file" };
import { defineRoute } from "./route.ts";

// Scalar's API reference is served from the npm package, embedded in the binary: no CDN.
const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>vecsync API reference</title>
  </head>
  <body>
    <script id="api-reference" data-url="/v1/openapi.json"></script>
    <script src="/docs/scalar.js"></script>
  </body>
</html>`;

export function docsRoutes(openApi: () => unknown) {
  return [
    defineRoute({
      method: "GET",
      path: "/v1/openapi.json",
      tag: "Meta",
      summary: "This API's OpenAPI 3.1 document",
      auth: "none",
      handler: () => openApi(),
    }),
    defineRoute({
      method: "GET",
      path: "/docs",
      tag: "Meta",
      summary: "Human-readable API reference",
      auth: "none",
      handler: () => new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } }),
    }),
    defineRoute({
      method: "GET",
      path: "/docs/scalar.js",
      tag: "Meta",
      summary: "The API reference's script",
      auth: "none",
      handler: () =>
        new Response(Bun.file(scalarBundle), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
    }),
  ];
}
