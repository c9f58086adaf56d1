import { usersOf, type Services } from "../../services.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { requireWriteAccess } from "../../shared/authz.ts";
import { AppError, notFound, validationError } from "../../shared/errors.ts";
import { hostPolicy, systemResolver, vetHost, type HostPolicy } from "../../shared/host-guard.ts";
import { newId } from "../../shared/ids.ts";
import type { Page, PageQuery } from "../../shared/pagination.ts";
import { isUniqueViolation } from "../../db/executor.ts";
import { modelsOf } from "../../drivers/embeddings/index.ts";
import { listNarrowedByEnvironment, resolveEnvironment } from "../environments/service.ts";
import { credentialProblems, normalizeBaseUrl, type CredentialFields } from "./checks.ts";
import {
  deleteProviderRow, findProvider, findProviderByName, insertProvider, pageProviders, updateProviderRow, type ProviderPatch, type ProviderRow,
} from "./repo.ts";
import type { CreateEmbeddingProvider, EmbeddingProvider, ModelList, UpdateEmbeddingProvider } from "./schemas.ts";

/** The purpose bound to every sealed provider key (a ciphertext moved elsewhere will not open). */
export const API_KEY_PURPOSE = "embedding_provider.api_key";

/** The answer shape (docs/api.md#embedding-providers): never the key, sealed or not. */
export function presentProvider(row: ProviderRow): EmbeddingProvider {
  return {
    id: row.id,
    org_id: row.orgId,
    environment_id: row.environmentId,
    name: row.name,
    provider: row.provider,
    default_model: row.defaultModel,
    base_url: row.baseUrl,
    status: row.status,
    created_at: row.createdAt,
  };
}

const nameTaken = (name: string) => new AppError("name_taken", `An embedding provider named "${name}" already exists in this organization`);

function checkFields(services: Services, provider: ProviderRow["provider"], fields: CredentialFields, creating: boolean): void {
  const problems = credentialProblems(provider, fields, hostPolicy(services.config), creating);
  if (problems.length > 0) throw validationError(problems);
}

/**
 * How long create and update wait for DNS to vet a base_url's name. A name that resolves to a
 * refused address is refused now, not at first use; DNS that fails or is slower than this is no
 * refusal (a gateway may resolve only where the service runs), since the host guard resolves and
 * checks again at every request.
 */
const SAVE_DNS_WAIT_MS = 2_000;

async function refuseResolvedHost(host: string, policy: HostPolicy): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const verdict = vetHost(host, policy, systemResolver, "base_url").then(() => null, (err: unknown) => err);
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), SAVE_DNS_WAIT_MS)));
  const err = await Promise.race([verdict, late]).finally(() => clearTimeout(timer));
  if (err instanceof AppError) throw err;
}

async function storedBaseUrl(services: Services, raw: string): Promise<string> {
  const policy = hostPolicy(services.config);
  const checked = normalizeBaseUrl(raw, policy);
  if ("problem" in checked) throw validationError([{ path: "base_url", message: checked.problem }]);
  await refuseResolvedHost(new URL(checked.url).hostname, policy);
  return checked.url;
}

/** Runs a write that may lose the race on the (org, name) unique index, answering 409 then. */
async function guardName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(name);
    throw err;
  }
}

/** POST /v1/embedding-providers: a `full` key; the environment from `X-Environment-Id` (docs/api.md#environments). */
export async function createEmbeddingProvider(services: Services, actor: KeyActor, input: CreateEmbeddingProvider, environmentHeader: string | null): Promise<EmbeddingProvider> {
  requireWriteAccess(actor);
  checkFields(services, input.provider, input, true);
  const env = await resolveEnvironment(services, actor, environmentHeader);
  const db = services.database.db;
  if (await findProviderByName(db, actor.orgId, input.name)) throw nameTaken(input.name);
  const baseUrl = input.base_url === undefined ? null : await storedBaseUrl(services, input.base_url);
  const now = services.clock.now().toISOString();
  const row: ProviderRow = {
    id: newId(),
    orgId: actor.orgId,
    environmentId: env.id,
    name: input.name,
    provider: input.provider,
    apiKeySealed: input.api_key === undefined ? null : services.secrets.seal(input.api_key, API_KEY_PURPOSE),
    defaultModel: input.default_model ?? null,
    baseUrl,
    status: "active",
    createdAt: now,
    updatedAt: now,
  };
  await guardName(input.name, () => insertProvider(db, row));
  services.logger.info({ org_id: actor.orgId, provider_id: row.id, provider: row.provider }, "embedding provider created");
  return presentProvider(row);
}

/** GET /v1/embedding-providers: `X-Environment-Id`, when sent, narrows the list (docs/api.md#environments). */
export async function listEmbeddingProviders(services: Services, actor: KeyActor, query: PageQuery, environmentHeader: string | null): Promise<Page<EmbeddingProvider>> {
  return listNarrowedByEnvironment(services, actor, "embedding-providers", query, environmentHeader, (environmentId, page) => pageProviders(services.database.db, actor.orgId, environmentId, page), presentProvider);
}

/** The organization's provider row, or 404 (a foreign id included). */
export async function providerRowOf(services: Services, orgId: string, id: string): Promise<ProviderRow> {
  const row = await findProvider(services.database.db, orgId, id);
  if (!row) throw notFound("Embedding provider");
  return row;
}

export async function getEmbeddingProvider(services: Services, actor: KeyActor, id: string): Promise<EmbeddingProvider> {
  return presentProvider(await providerRowOf(services, actor.orgId, id));
}

/** PUT /v1/embedding-providers/{id}: a `full` key; the provider kind and environment stay. */
export async function updateEmbeddingProvider(services: Services, actor: KeyActor, id: string, input: UpdateEmbeddingProvider): Promise<EmbeddingProvider> {
  requireWriteAccess(actor);
  const row = await providerRowOf(services, actor.orgId, id);
  checkFields(services, row.provider, input, false);
  const db = services.database.db;
  if (input.name !== undefined && input.name !== row.name && (await findProviderByName(db, actor.orgId, input.name))) throw nameTaken(input.name);
  const patch: ProviderPatch = { updatedAt: services.clock.now().toISOString() };
  if (input.name !== undefined) patch.name = input.name;
  if (input.api_key !== undefined) patch.apiKeySealed = services.secrets.seal(input.api_key, API_KEY_PURPOSE);
  if (input.default_model !== undefined) patch.defaultModel = input.default_model;
  if (input.base_url !== undefined) patch.baseUrl = input.base_url === null ? null : await storedBaseUrl(services, input.base_url);
  await guardName(input.name ?? row.name, () => updateProviderRow(db, actor.orgId, id, patch));
  services.logger.info({ org_id: actor.orgId, provider_id: id, changed: Object.keys(input) }, "embedding provider updated");
  return presentProvider(await providerRowOf(services, actor.orgId, id));
}

/** DELETE /v1/embedding-providers/{id}: a `full` key; never while a vector table uses it. */
export async function deleteEmbeddingProvider(services: Services, actor: KeyActor, id: string): Promise<void> {
  requireWriteAccess(actor);
  const row = await providerRowOf(services, actor.orgId, id);
  const users = await usersOf(services.dependents.embeddingProvider, actor.orgId, row.id);
  if (users.length > 0) {
    throw new AppError("in_use", `The embedding provider is used by ${users.join(" and ")}; delete or change them first`, { details: { used_by: users } });
  }
  await deleteProviderRow(services.database.db, actor.orgId, row.id);
  services.logger.info({ org_id: actor.orgId, provider_id: id }, "embedding provider deleted");
}

/** GET /v1/embedding-providers/{id}/models: the model rows (docs/api.md#models) for the provider's kind. */
export async function listProviderModels(services: Services, actor: KeyActor, id: string): Promise<ModelList> {
  const row = await providerRowOf(services, actor.orgId, id);
  return { models: modelsOf(row.provider) };
}
