// The typed client for TypeScript apps is the @vecsync/client package (packages/client, docs/api.md#typescript-client);
// its types are generated from rpc/router.ts. This path keeps it at hand for the service's own tests.
export * from "../packages/client/src/index.ts";
