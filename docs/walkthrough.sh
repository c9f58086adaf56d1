#!/usr/bin/env bash
# From sign-in to a filtered semantic query and a backup, against a running service (npm start).
# Run it from the checkout: bash docs/walkthrough.sh. It stops at the first step that fails,
# saying which. Needs curl and jq; settings below, each overridable from the environment.
set -euo pipefail

export VECSYNC_URL=${VECSYNC_URL:-http://127.0.0.1:8080}  # the service; the CLI reads it too
DATA_DIR=${VECSYNC_DATA_DIR:-./data}                      # the service's data directory
OUTBOX=${VECSYNC_MAIL_OUTBOX:-$DATA_DIR/outbox.jsonl}     # e-mails land here when no SMTP is set
EMAIL=${EMAIL:-you@example.com}
ORG_NAME=${ORG_NAME:-walkthrough-$(date +%s)-$RANDOM}
# The source: a Postgres table `products` (id, name, description, category, price, in_stock).
PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGDATABASE=${PGDATABASE:-shop}
PGUSER=${PGUSER:-postgres} PGPASSWORD=${PGPASSWORD:-postgres} PGSSLMODE=${PGSSLMODE:-disable}
# Embeddings: any OpenAI-compatible server. Default: Ollama on this machine, offline (README).
EMBEDDINGS_URL=${EMBEDDINGS_URL:-http://localhost:11434/v1}
EMBEDDINGS_KEY=${EMBEDDINGS_KEY:-ollama}
EMBEDDING_DIMENSIONS=${EMBEDDING_DIMENSIONS:-768}
BACKUP_FILE=${BACKUP_FILE:-vecsync-backup-$(date +%Y%m%d-%H%M%S).db}

vecsync() { node_modules/.bin/bun run src/main.ts "$@"; }  # the binary: ./dist/vecsync "$@"

# api METHOD PATH [JSON]: prints the answer; on an HTTP error prints it on stderr and fails.
BEARER=""
api() {
  local args=(-sS --fail-with-body -X "$1" "$VECSYNC_URL$2") answer
  if [ -n "$BEARER" ]; then args+=(-H "authorization: Bearer $BEARER"); fi
  if [ $# -ge 3 ]; then args+=(-H "content-type: application/json" --data "$3"); fi
  answer=$(curl "${args[@]}") || { echo "walkthrough: $1 $2 failed: $answer" >&2; return 1; }
  printf '%s\n' "$answer"
}

echo "== 0. the service answers"
api GET /healthz

echo "== 1. sign in with a one-time code (read from the outbox)"
SEEN=0; if [ -f "$OUTBOX" ]; then SEEN=$(wc -l <"$OUTBOX"); fi
api POST /v1/auth/otp "$(jq -n --arg email "$EMAIL" '{email: $email}')"
CODE=""
for _ in $(seq 50); do  # the e-mail is written just after the answer
  CODE=$(tail -n +"$((SEEN + 1))" "$OUTBOX" 2>/dev/null | jq -r --arg to "$EMAIL" 'select(.to == $to) | .text' | grep -oE '[0-9]{6}' | tail -n 1) || true
  if [ -n "$CODE" ]; then break; fi
  sleep 0.2
done
[ -n "$CODE" ] || { echo "walkthrough: no sign-in code for $EMAIL in $OUTBOX" >&2; exit 1; }
ANSWER=$(api POST /v1/auth/verify "$(jq -n --arg email "$EMAIL" --arg code "$CODE" '{email: $email, code: $code}')")
BEARER=$(jq -er .access_token <<<"$ANSWER")

echo "== 2. an organization; its first API key is used for everything after"
ANSWER=$(api POST /v1/organizations "$(jq -n --arg name "$ORG_NAME" '{name: $name}')")
export VECSYNC_API_KEY; VECSYNC_API_KEY=$(jq -er .api_key <<<"$ANSWER")
BEARER=$VECSYNC_API_KEY

echo "== 3. an embedding provider: emb_a (the OpenAI wire format) at EMBEDDINGS_URL"
ANSWER=$(api POST /v1/embedding-providers "$(jq -n --arg url "$EMBEDDINGS_URL" --arg key "$EMBEDDINGS_KEY" \
  '{name: "embeddings", provider: "emb_a", api_key: $key, base_url: $url}')")
PROVIDER_ID=$(jq -er .id <<<"$ANSWER")

echo "== 4. a connection to the source database, and its test"
ANSWER=$(api POST /v1/providers/db_relational/connections "$(jq -n --arg host "$PGHOST" --argjson port "$PGPORT" \
  --arg db "$PGDATABASE" --arg user "$PGUSER" --arg password "$PGPASSWORD" --arg ssl "$PGSSLMODE" \
  '{name: "shop", mode: "managed", credentials: {host: $host, port: $port, database: $db, user: $user, password: $password, ssl_mode: $ssl}}')")
CONNECTION_ID=$(jq -er .id <<<"$ANSWER")
ANSWER=$(api POST "/v1/connections/$CONNECTION_ID/test")
jq -e '.status == "connected"' <<<"$ANSWER" >/dev/null || { echo "walkthrough: connection test failed: $ANSWER" >&2; exit 1; }
echo "$ANSWER"

echo "== 5. a vector table: which columns are embedded, which are metadata to filter on"
ANSWER=$(api POST /v1/vector-tables "$(jq -n --arg conn "$CONNECTION_ID" --arg provider "$PROVIDER_ID" --argjson dims "$EMBEDDING_DIMENSIONS" '{
  name: "products", connection_id: $conn, embedding_provider_id: $provider,
  source_table: "products", primary_key_column: "id",
  columns: [
    {name: "name", role: "embedding", ordinal: 1},
    {name: "description", role: "embedding", ordinal: 2},
    {name: "category", role: "metadata", filter_type: "keyword"},
    {name: "price", role: "metadata", filter_type: "float"},
    {name: "in_stock", role: "metadata", filter_type: "boolean"}
  ],
  embedding_model: "text-embedding-3-small", embedding_dimensions: $dims, sync_mode: "batch"}')")
TABLE_ID=$(jq -er .id <<<"$ANSWER")

echo "== 6. backfill, watched until done"
api POST "/v1/vector-tables/$TABLE_ID/backfill"
vecsync tasks --watch --until-done
ANSWER=$(api GET "/v1/vector-tables/$TABLE_ID")
jq -e '.sync_status == "synced"' <<<"$ANSWER" >/dev/null || { echo "walkthrough: table not synced: $ANSWER" >&2; exit 1; }
vecsync status

echo "== 7. a semantic query with metadata filters"
ANSWER=$(api POST "/v1/vector-tables/$TABLE_ID/query" \
  '{"query": "waterproof gear for rainy hiking trips", "limit": 5, "filters": {"category": {"eq": "outdoors"}, "price": {"lt": 100}}}')
jq -e '.total_results > 0' <<<"$ANSWER" >/dev/null || { echo "walkthrough: no results: $ANSWER" >&2; exit 1; }
jq -c '.results[] | {id, similarity_score, metadata}' <<<"$ANSWER"

echo "== 8. an online backup (the keys are not in it: keep master.key and jwt.secret with it)"
vecsync backup --to "$BACKUP_FILE" --data-dir "$DATA_DIR"

echo "== done: VECSYNC_API_KEY=${VECSYNC_API_KEY:0:12}… table $TABLE_ID"
