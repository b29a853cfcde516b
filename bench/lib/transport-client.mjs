/**
 * One client process for bench/transport.mjs. Usage: node transport-client.mjs transport|fetch get|stream URL.
 * `get`: one bare GET, body read to the end. `stream`: the OpenAI Chat wire client streaming the fake provider's reply
 * to the end. Prints {"tokens":N,"cpuMs":X}: the `tok ` tokens of the streamed text (the client joins the deltas of one
 * read into one event) and the process CPU spent from the request to the last event.
 */
const [mode, kind, url] = process.argv.slice(2);
const providers = await import(new URL('../../packages/providers/dist/index.js', import.meta.url).href);
const transport = mode === 'fetch' ? (await import('./fetch-transport.mjs')).fetchTransport() : providers.createTransport();

let text = '';
const cpu0 = process.cpuUsage();
if (kind === 'get') {
  if (mode === 'fetch') await (await fetch(url)).text();
  else await (await transport.request({ url })).text(1 << 20);
} else {
  const client = await providers.createChatClient(
    { name: 'bench', protocol: 'openai', baseUri: url, apiKey: 'bench-key' },
    { id: 'fake-model' },
    { transport },
  );
  const request = { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  for await (const event of client.stream(request)) if (event.type === 'text-delta') text += event.text;
}
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ tokens: text.split('tok ').length - 1, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
process.exit(0);
