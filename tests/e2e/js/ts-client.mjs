// A plain TypeScript SDK 1.x client (@modelcontextprotocol/sdk from the lock file, its own
// StdioClientTransport / StreamableHTTPClientTransport, not mcptape's js/ helper), for the client
// matrix (tests/e2e/test_client_matrix.py) and for recording the TS golden cassettes
// (scripts/record-golden).
//
//   node ts-client.mjs session (URL | -- COMMAND ARGS...)      the golden demo session, one line per call
//   node ts-client.mjs matrix N (URL | -- COMMAND ARGS...)     a matrix cell: one JSON object on stdout
//   node ts-client.mjs calls JSON (URL | -- COMMAND ARGS...)   lists tools and makes the calls JSON
//                                                             names ([[tool, arguments], ...]): one
//                                                             JSON object on stdout (tests/e2e/test_mock_clients.py)
//
// `matrix` lists tools, calls `add` N times with an onprogress callback (every step of every call
// is reported), then makes the calls that fail (a JSON-RPC error, an isError result), the one that
// elicits (answered "Ada"), a resource read and a prompt.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
const calls = mode === "matrix" ? Number(rest.shift()) : 0;
const asked = mode === "calls" ? JSON.parse(rest.shift()) : [];
const target = rest[0] === "--" ? { command: rest[1], args: rest.slice(2) } : { url: rest[0] };
if (!["session", "matrix", "calls"].includes(mode) || (!target.url && !target.command)) {
  console.error("usage: node ts-client.mjs (session | matrix N | calls JSON) (URL | -- COMMAND ARGS...)");
  process.exit(2);
}

const elicited = [];
const sdkErrors = [];
const client = new Client({ name: "ts-sdk-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {}, url: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicited.push(request.params.message);
  return { action: "accept", content: { name: "Ada" } };
});
client.onerror = (error) => sdkErrors.push(String(error));

async function outcome(call) {
  try {
    return await call;
  } catch (error) {
    if (error instanceof McpError) return { error: { code: error.code, message: error.message.replace(/^MCP error -?\d+: /, "") } };
    throw error;
  }
}

async function session() {
  const show = async (what, call) => {
    const got = await outcome(call);
    console.log(`${what}: ${got.error ? `error ${got.error.code} ${got.error.message}` : got.isError ? "ok (isError)" : "ok"}`);
  };
  await show("tools/list", client.listTools());
  await show("add", client.callTool({ name: "add", arguments: { a: 1, b: 2 } }, undefined, { onprogress: (p) => console.log(`  progress ${p.progress}/${p.total} ${p.message}`) }));
  await show("echo", client.callTool({ name: "echo", arguments: { message: "hello" } }));
  await show("fail", client.callTool({ name: "fail", arguments: {} }));
  await show("divide by zero", client.callTool({ name: "divide", arguments: { a: 1, b: 0 } }));
  await show("greet", client.callTool({ name: "greet", arguments: {} }));
  await show("resources/list", client.listResources());
  await show("resources/read", client.readResource({ uri: "demo://readme" }));
  await show("missing resource", client.readResource({ uri: "demo://nope" }));
  await show("prompts/list", client.listPrompts());
  await show("review", client.getPrompt({ name: "review", arguments: { code: "print(1)" } }));
}

async function matrix() {
  const out = { serverInfo: client.getServerVersion(), tools: (await client.listTools()).tools };
  out.progress = [];
  for (let i = 0; i < calls; i++) {
    const steps = [];
    const result = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } }, undefined, {
      onprogress: (p) => steps.push([p.progress, p.total ?? null, p.message ?? null]),
    });
    out.progress.push(steps);
    if (i === 0) out.add = result;
  }
  out.fail = await outcome(client.callTool({ name: "fail", arguments: {} }));
  out.divide = await outcome(client.callTool({ name: "divide", arguments: { a: 1, b: 0 } }));
  out.greet = await outcome(client.callTool({ name: "greet", arguments: {} }));
  out.readme = await outcome(client.readResource({ uri: "demo://readme" }));
  out.review = await outcome(client.getPrompt({ name: "review", arguments: { code: "print(1)" } }));
  out.elicited = elicited;
  out.sdkErrors = sdkErrors;
  console.log(JSON.stringify(out));
}

async function toolCalls() {
  const out = { tools: (await client.listTools()).tools, calls: [] };
  for (const [name, args] of asked) out.calls.push(await outcome(client.callTool({ name, arguments: args })));
  out.sdkErrors = sdkErrors;
  console.log(JSON.stringify(out));
}

const transport = target.url
  ? new StreamableHTTPClientTransport(new URL(target.url))
  : new StdioClientTransport({ command: target.command, args: target.args, stderr: "inherit" });
await client.connect(transport);
try {
  await ({ session, matrix, calls: toolCalls }[mode]());
} finally {
  await client.close();
}
