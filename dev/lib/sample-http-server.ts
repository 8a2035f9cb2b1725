// The sample backend a test host runs: answers every request with `<body> <path>`.
// Usage: node sample-http-server.ts <body> <port>
import { createServer } from 'node:http';

const [body = 'sample', port = '8080'] = process.argv.slice(2);
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end(`${body} ${req.url ?? ''}`);
});
server.listen(Number(port), '0.0.0.0', () => {
  process.stdout.write(`sample backend "${body}" listening on :${port}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
