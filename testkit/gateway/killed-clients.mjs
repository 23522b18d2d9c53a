// A separate process holding N Entry sessions, so a test can SIGKILL it: the kernel then drops every
// connection at once, the way clients vanish when a laptop dies. Prints "ready" once every shell answered.
// usage: node killed-clients.mjs <ws-url> <token> <count>
import { Buffer } from "node:buffer";
import process from "node:process";
import WebSocket from "ws";

const [url, token, count] = process.argv.slice(2);
let ready = 0;
for (let i = 0; i < Number(count); i++) {
  const ws = new WebSocket(url, { headers: { "access-token": token } });
  let seen = Buffer.alloc(0);
  let done = false;
  ws.on("open", () => {
    // Entry's RequestMessage, hand-encoded: field 1 (msgType, PLAIN = 0 is the default), field 2 (content).
    const command = Buffer.from(`echo ready-$((1000+${i}))\n`);
    ws.send(Buffer.concat([Buffer.from([0x12, command.length]), command]));
  });
  ws.on("message", (data) => {
    seen = Buffer.concat([seen, data]);
    if (!done && seen.includes(`ready-${1000 + i}`)) {
      done = true;
      if (++ready === Number(count)) process.stdout.write("ready\n");
    }
  });
}
