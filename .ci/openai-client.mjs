// The official openai npm client against `maker serve-sim` (.ci/mcp.sh):
// a chat completion decodes as the client's own types, the request id is
// the server's X-Request-Id, and what serve-sim cannot honour is refused
// with an error the client raises (docs/servesim.md), not ignored.
// Usage: node openai-client.mjs BASE_URL
import OpenAI from "openai";

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
const fail = (msg) => { console.error("openai client: " + msg); process.exit(1); };
const prompt = [
  { role: "system", content: "You solve the Towers of Hanoi one move at a time." },
  { role: "user", content: "Current state: [[3, 2, 1], [], []]\nPrevious move: none\nGive the next move." },
];

const { data: chat, response } = await client.chat.completions
  .create({ model: "sim", messages: prompt, seed: 1 })
  .withResponse();
if (chat.object !== "chat.completion") fail(`object ${chat.object}`);
if (chat.choices.length !== 1 || typeof chat.choices[0].message.content !== "string" || chat.choices[0].message.content === "") {
  fail(`choices ${JSON.stringify(chat.choices)}`);
}
if (!(chat.usage && chat.usage.prompt_tokens > 0 && chat.usage.completion_tokens > 0)) fail(`usage ${JSON.stringify(chat.usage)}`);
const rid = response.headers.get("x-request-id");
if (!rid) fail("no x-request-id header");
console.log(`chat.completion ${chat.id}, ${chat.usage.completion_tokens} completion tokens, x-request-id ${rid}`);

const models = await client.models.list();
if (!models.data.some((m) => m.id === "sim")) fail(`models ${JSON.stringify(models.data)}`);
console.log(`models: ${models.data.map((m) => m.id).join(", ")}`);

for (const [what, extra] of [
  ["tool_choice required", { tool_choice: "required", tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }] }],
  ["logprobs", { logprobs: true }],
]) {
  try {
    await client.chat.completions.create({ model: "sim", messages: prompt, ...extra });
    fail(`${what} was answered; serve-sim cannot honour it and must refuse it`);
  } catch (e) {
    if (!(e instanceof OpenAI.BadRequestError)) fail(`${what}: ${e}`);
    console.log(`${what}: refused, ${e.status} ${e.message.slice(0, 100)}`);
  }
}
