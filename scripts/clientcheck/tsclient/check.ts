// The TypeScript client check: compiled by scripts/clientcheck with the
// types openapi-typescript generated (api.d.ts) and run against the dev
// server named by $BASE with the demo credentials in the environment.
import createClient from "openapi-fetch";
import type { paths } from "./api.js";

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`$${name} is not set`);
  return v;
};

const client = createClient<paths>({ baseUrl: env("BASE") });
const studio = { "x-api-key": env("KEY") };

// `enabled` has a default: a create body without it must type-check.
const created = await client.POST("/v1/alert-rules", {
  headers: studio,
  body: { name: "TS client", project_id: env("PROJECT"), metric: "api_errors", operator: ">=", threshold_value: 3, window_duration: "5m" },
});
if (!created.data) throw new Error(`create: ${created.response.status} ${JSON.stringify(created.error)}`);
const id: string = created.data.id;

const got = await client.GET("/v1/alert-rules/{rule_id}", { headers: studio, params: { path: { rule_id: id } } });
if (!got.data || got.data.name !== "TS client" || got.data.enabled !== true) {
  throw new Error(`get: ${got.response.status} ${JSON.stringify(got.error)}`);
}

// A typed 422: the error's fields are known to the compiler.
const bad = await client.POST("/v1/alert-rules", {
  headers: studio,
  body: { name: "bad", metric: "api_errors", operator: ">=", threshold_value: 3, window_duration: "5m", project_id: "no such project!" },
});
if (bad.response.status !== 422 || !bad.error || !("errors" in bad.error) || bad.error.errors.length === 0) {
  throw new Error(`want a 422: ${bad.response.status} ${JSON.stringify(bad.error)}`);
}
const field: string = bad.error.errors[0].field;

// The base host: a conversations page.
const page = await client.GET("/v3/{account_id}/{project_id}/conversations", {
  headers: { "x-api-key": env("PKEY") },
  params: { path: { account_id: env("ACCOUNT"), project_id: env("PROJECT") } },
});
if (!page.data) throw new Error(`v3 conversations: ${page.response.status} ${JSON.stringify(page.error)}`);
console.log(`ts client: created ${id}, read it back, a typed 422 (${field}), ${page.data.conversations.length} conversations on the base host`);
