// The credentials objects (docs/api.md#credentials) as OpenAPI components: the shapes credentials.ts
// checks, with each field's meaning and default written out, so the document describes them in full.
import type { OpenApiComponent } from "../../shared/validate.ts";
import { RelationalShape, SSL_MODES, WarehouseShape } from "./credentials.ts";

type JsonSchema = Record<string, unknown> & { properties?: Record<string, Record<string, unknown>> };

function documented(schema: JsonSchema, description: string, fields: Record<string, Record<string, unknown>>): JsonSchema {
  const { $schema: _, ...rest } = schema;
  const properties = Object.fromEntries(Object.entries(rest.properties ?? {}).map(([name, field]) => [name, { ...field, ...fields[name] }]));
  const undocumented = Object.keys(properties).filter((name) => !fields[name]);
  if (undocumented.length > 0) throw new Error(`credentials fields without a description: ${undocumented.join(", ")}`);
  return { ...rest, description, properties };
}

const secret = "Stored encrypted; never returned, logged or put in an error message.";

const RelationalCredentials = documented(RelationalShape.toJsonSchema() as JsonSchema, "Credentials of a `db_relational` (PostgreSQL) connection.", {
  host: { description: "Host name or IP address of the server (no port, path or URL). Link-local and cloud-metadata addresses are refused (400)." },
  port: { description: "TCP port.", default: 5432 },
  database: { description: "Database name." },
  user: { description: "User to sign in as." },
  password: { description: `The user's password. ${secret}` },
  ssl_mode: { description: `TLS mode, as PostgreSQL names it (${SSL_MODES.join(", ")}).`, default: "prefer" },
});

const WarehouseCredentials = documented(WarehouseShape.toJsonSchema() as JsonSchema, "Credentials of a `db_warehouse` connection. `password` goes with `auth_method: password`, `private_key` with `key_pair`; the other is refused.", {
  auth_method: { description: "How to sign in: `password`, or `key_pair` (an RSA key)." },
  account: { description: "Account identifier (letters, digits, `-`, `_`, `.`); the warehouse's address is derived from it." },
  user: { description: "User to sign in as." },
  password: { description: `Required with \`auth_method: password\`. ${secret}` },
  private_key: { description: `Required with \`auth_method: key_pair\`: an unencrypted RSA private key in PEM (PKCS#1 or PKCS#8). ${secret}` },
  warehouse: { description: "Warehouse (compute) to run statements on." },
  database: { description: "Database holding the source tables." },
  schema: { description: "Schema holding the source tables.", default: "PUBLIC" },
  role: { description: "Role to use." },
});

const ConnectionCredentials = {
  description: "A connection's credentials: the object of the connection's provider (`db_relational` or `db_warehouse`, the `provider` path parameter on creation). Every text field is 1-1000 characters (a host up to 255, a PEM key up to 20,000). A problem is reported by field, never with the value sent.",
  oneOf: [{ $ref: "#/components/schemas/RelationalCredentials" }, { $ref: "#/components/schemas/WarehouseCredentials" }],
};

export const CREDENTIALS_COMPONENT: OpenApiComponent = { name: "ConnectionCredentials", schemas: { ConnectionCredentials, RelationalCredentials, WarehouseCredentials } };
