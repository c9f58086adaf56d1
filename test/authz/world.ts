// Two organizations with a bit of everything, for the authorization tests. Later issues add their
// resources (connections, vector tables, tasks…) here and their routes to the tables that use it.
import { enqueue } from "../../src/scheduler/enqueue.ts";
import { BACKFILL } from "../../src/domains/tasks/kinds.ts";
import { insertVectorTable } from "../../src/domains/vector-tables/repo.ts";
import { collectionName } from "../../src/domains/vector-tables/render.ts";
import { newId } from "../../src/shared/ids.ts";
import type { TestApp } from "../harness.ts";
import { addMember, newOrganization, readOnlyKey, type Bearer, type OrgMember, type TestOrg, json } from "../helpers/organizations.ts";

export type Tenant = TestOrg & {
  admin: OrgMember;
  member: OrgMember;
  readOnly: Bearer;
  /** A spare key made by the member. */
  keyId: string;
  /** The owner's first key. */
  ownerKeyId: string;
  environmentId: string;
  /** An embedding provider (local: no key needed) in the tenant's staging environment. */
  providerId: string;
  /** A Postgres connection (never tested here) in the tenant's staging environment. */
  connectionId: string;
  invitationId: string;
  /** A queued task of the organization (a backfill of a made-up target: nothing runs it here). */
  taskId: string;
  /** A synced vector table over the world connection, with an empty collection. */
  vectorTableId: string;
};

/**
 * Written to the database directly: the API would read the source's schema, and the world's
 * connection points at no real database (nothing here needs one).
 */
async function worldVectorTable(app: TestApp, orgId: string, environmentId: string, connectionId: string, providerId: string): Promise<string> {
  const id = newId();
  const now = app.services.clock.now().toISOString();
  const columns = [{ name: "body", role: "embedding" as const }, { name: "kind", role: "metadata" as const, filter_type: "keyword" as const }];
  const collection = collectionName(id, "world-table");
  await insertVectorTable(app.services.database.db, {
    id, orgId, environmentId, connectionId, embeddingProviderId: providerId, name: "world-table", sourceTable: "docs", primaryKeyColumn: "id", columns,
    embeddingModel: "local-lexical-v1", embeddingDimensions: 16, mode: "managed", syncMode: "batch", syncStatus: "synced", vectorstoreCollection: collection,
    platformVectorRef: null, numericPk: true, configVersion: 1, servingModel: "local-lexical-v1", servingDimensions: 16, totalRows: 0, syncedRows: 0, rowsPending: 0,
    lastSyncStartedAt: null, lastSyncAt: null, oldestPendingChangeAt: null, cdcCheckpoint: null, lastError: null, lastErrorAt: null, feedResyncReason: null, createdAt: now, updatedAt: now,
  });
  await app.services.vectors.createCollection(collection, { dimensions: 16, metadata: [{ name: "kind", type: "keyword" }], numericPk: true });
  return id;
}

export type World = { a: Tenant; b: Tenant };

async function tenant(app: TestApp): Promise<Tenant> {
  const org = await newOrganization(app);
  const admin = await addMember(app, org, "admin");
  const member = await addMember(app, org, "member");
  const readOnly = await readOnlyKey(app, org.owner);
  const key = await json(await app.request("POST", "/v1/api-keys", { headers: member.key, body: { name: "spare" } }));
  const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "staging" } }));
  const provider = await json(await app.request("POST", "/v1/embedding-providers", { headers: { ...org.owner.key, "x-environment-id": env.id }, body: { name: "world-provider", provider: "local" } }));
  const connection = await json(await app.request("POST", "/v1/providers/db_relational/connections", { headers: { ...org.owner.key, "x-environment-id": env.id }, body: { name: "world-connection", mode: "managed", credentials: { host: "127.0.0.1", database: "world", user: "world", password: "world-secret" } } }));
  const inv = await json(await app.request("POST", `/v1/organizations/${org.id}/invitations`, { headers: org.owner.jwt, body: { email: `pending-${org.id}@example.com`, role: "member" } }));
  const keys = (await json(await app.request("GET", "/v1/api-keys", { headers: org.owner.key }))).data as { id: string; created_by: string }[];
  const ownerKeyId = keys.find((k) => k.created_by === org.owner.user.userId)!.id;
  const task = await enqueue<unknown>(app.services.database.db, BACKFILL, { orgId: org.id, targetId: `vt-of-${org.id}`, payload: {}, now: app.services.clock.now() });
  const vectorTableId = await worldVectorTable(app, org.id, env.id, connection.id, provider.id);
  return { ...org, admin, member, readOnly, keyId: key.api_key.id, ownerKeyId, environmentId: env.id, providerId: provider.id, connectionId: connection.id, invitationId: inv.id, taskId: task.id, vectorTableId };
}

export async function buildWorld(app: TestApp): Promise<World> {
  return { a: await tenant(app), b: await tenant(app) };
}

/** Path parameters filled with the tenant's real ids (unknown names get a well-formed dummy id). */
export function fillPath(path: string, t: Tenant): string {
  const ids: Record<string, string> = {
    org_id: t.id,
    user_id: t.member.user.userId,
    key_id: t.keyId,
    environment_id: t.environmentId,
    task_id: t.taskId,
    provider_id: t.providerId,
    connection_id: t.connectionId,
    vector_table_id: t.vectorTableId,
    provider: "db_relational",
    token: "not-a-real-invitation-token",
  };
  return path.replace(/:([a-z_]+)/g, (_, name: string) => ids[name] ?? "0000000000000000000000000a");
}

export const routeKey = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
